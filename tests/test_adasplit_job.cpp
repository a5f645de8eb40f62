// AdaSplit under mpirun, checked through its results file (1 server + 3 devices,
// synthetic data of 6 classes, 2 per device, 5 rounds of which the first 2 are local):
//  - the local phase sends nothing; in the global phase exactly `selected` devices
//    upload per iteration, every device with a batch gets a one-byte choice, and no
//    gradient ever goes back;
//  - /rounds' bytes are activation x samples + labels + choices, to the byte;
//  - it learns: the devices' mean accuracy well above chance; masks' sparsity is recorded;
//  - a run repeats bit for bit (server steps in device order, seeded orchestrator), and
//    one without its timeline counts the same bytes and messages per round;
//  - the orchestrator = all ablation has every device upload every iteration.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <unistd.h>

#include "cmlbed/model/zoo.hpp"
#include "cmlbed/trace/results_file.hpp"

namespace cmlbed {
namespace {

constexpr int kDevices = 3;
constexpr int kIterations = 20;
constexpr int kRounds = 5;
constexpr int kLocalRounds = 2;  // floor(0.4 x 5)
constexpr int kBatch = 16;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string run(const std::string& name, int rounds, int iterations, const std::string& extra) {
  const std::string file = ::testing::TempDir() + "cmlbed_adasplit_" + std::to_string(::getpid()) + "_" + name + ".h5";
  const std::string command =
      env("CMLBED_MPIEXEC") + " --oversubscribe -np " + std::to_string(kDevices + 1) + " " + env("CMLBED_BINARY") +
      " run --experiment.method=adasplit --experiment.rounds=" + std::to_string(rounds) +
      " --adasplit.local_fraction=0.4"
      " --adasplit.selected=2 --data.dataset=synthetic --data.synthetic_train=1200 --data.synthetic_test=300"
      " --data.synthetic_classes=6 --data.partition=shards --data.classes_per_device=2 --model.name=lenet --model.split=2"
      " --train.batch_size=" + std::to_string(kBatch) + " --train.local_iterations=" + std::to_string(iterations) +
      " --train.optimizer=adam --train.lr=0.005 --evaluation.scope=per-device --network.uplink_rate=200mbit"
      " --output.progress=false --output.overwrite=true " + extra + " --output.file=" + file + " > /dev/null";
  EXPECT_EQ(WEXITSTATUS(std::system(command.c_str())), 0) << command;
  return file;
}

// Sends of the training (not evaluation, which follows each round's window), per rank.
std::vector<trace::Event> training_sends(const std::string& file, int rank,
                                         const std::vector<trace::RoundRecord>& rounds) {
  std::vector<trace::Event> sends;
  for (const trace::Event& e : trace::ResultsFile::read_events(file, rank)) {
    if (e.kind != trace::EventKind::send || e.round < 0) continue;
    if (e.t_start_ns >= rounds.at(static_cast<std::size_t>(e.round)).t_end_ns) continue;
    sends.push_back(e);
  }
  return sends;
}

TEST(AdaSplitJob, SendsOnlyInTheGlobalPhaseOnlyChosenActivationsAndNoGradients) {
  const std::string file = run("ucb", kRounds, kIterations, "");
  const auto rounds = trace::ResultsFile::read_rounds(file);
  ASSERT_EQ(rounds.size(), static_cast<std::size_t>(kRounds));
  // Every message of the timed windows, by (round, batch): activations up, choices down.
  std::map<std::pair<int, int>, int> uploads;
  for (int rank = 1; rank <= kDevices; ++rank) {
    for (const trace::Event& e : training_sends(file, rank, rounds)) {
      EXPECT_EQ(e.message, trace::MessageType::activation) << "rank " << rank;
      EXPECT_GE(e.round, kLocalRounds) << "a device sent in the local phase";
      ++uploads[{e.round, e.batch}];
    }
  }
  std::map<std::pair<int, int>, int> choices;
  for (const trace::Event& e : training_sends(file, 0, rounds)) {
    EXPECT_NE(e.message, trace::MessageType::gradient);
    EXPECT_EQ(e.message, trace::MessageType::control);
    EXPECT_EQ(e.bytes, 1);
    EXPECT_GE(e.round, kLocalRounds);
    ++choices[{e.round, e.batch}];
  }
  for (int round = kLocalRounds; round < kRounds; ++round) {
    for (int batch = 0; batch < kIterations; ++batch) {
      EXPECT_EQ(uploads[std::make_pair(round, batch)], 2) << "round " << round << " batch " << batch;
      EXPECT_EQ(choices[std::make_pair(round, batch)], kDevices) << "round " << round << " batch " << batch;
    }
  }
  // Bytes: LeNet's pool1 output per sample (float32) x batch + int64 labels, for 2
  // uploads per iteration; one byte per device per iteration down.
  model::ModelOptions options;
  options.name = "lenet";
  options.input = ImageShape{1, 28, 28};
  const std::int64_t activation = model::layer_stats(options).at(1).activation_bytes_per_sample;
  for (int round = 0; round < kRounds; ++round) {
    const auto& r = rounds[static_cast<std::size_t>(round)];
    const bool global = round >= kLocalRounds;
    EXPECT_EQ(r.bytes_up, global ? kIterations * 2 * (activation + 8) * kBatch : 0) << round;
    EXPECT_EQ(r.bytes_down, global ? kIterations * kDevices : 0) << round;
    EXPECT_EQ(r.messages_up, global ? kIterations * 2 : 0) << round;
    EXPECT_TRUE(std::isnan(r.mask_sparsity[0]));
    for (int device = 1; device <= kDevices; ++device) {
      EXPECT_GE(r.mask_sparsity[static_cast<std::size_t>(device)], 0.0);
      EXPECT_LE(r.mask_sparsity[static_cast<std::size_t>(device)], 1.0);
      EXPECT_GT(r.flops[static_cast<std::size_t>(device)], 0.0);
    }
    EXPECT_EQ(r.flops[0] > 0, global) << "the server trains in the global phase only";
  }
  // It learns: the devices tell their two classes apart well above chance (0.5 among
  // its own two classes) on average. One device of three may still answer one class
  // after 5 rounds, from some seeds: the mean, not each device, is what every seed passes.
  double mean = 0;
  for (int device = 1; device <= kDevices; ++device) {
    mean += rounds.back().device_accuracy[static_cast<std::size_t>(device)] / kDevices;
  }
  EXPECT_GT(mean, 0.7);
  // The server's masks and shared weights are kept.
  EXPECT_FALSE(trace::ResultsFile::read_model(file, "server").empty());
  EXPECT_FALSE(trace::ResultsFile::read_model(file, "masks_3").empty());
}

TEST(AdaSplitJob, ARunRepeatsBitForBitAlsoWithoutItsTimeline) {
  // The server steps its shared weights in device order and the orchestrator draws from
  // a seeded generator, so timing (arrival order) cannot change the result. The second
  // run keeps no timeline: its rounds' traffic comes from the server's transport
  // counters, which must leave out what the evaluation after each round moves (the
  // devices' parts to the server), as the events do.
  const std::string a = run("repeat_a", 3, 8, "");
  const std::string b = run("repeat_b", 3, 8, "--output.timeline=false");
  EXPECT_EQ(trace::ResultsFile::read_model(a, "server"), trace::ResultsFile::read_model(b, "server"));
  for (int device = 1; device <= kDevices; ++device) {
    const std::string masks = "masks_" + std::to_string(device);
    EXPECT_EQ(trace::ResultsFile::read_model(a, masks), trace::ResultsFile::read_model(b, masks)) << masks;
  }
  const auto rounds_a = trace::ResultsFile::read_rounds(a);
  const auto rounds_b = trace::ResultsFile::read_rounds(b);
  ASSERT_EQ(rounds_a.size(), rounds_b.size());
  for (std::size_t r = 0; r < rounds_a.size(); ++r) {
    for (int device = 1; device <= kDevices; ++device) {  // the server's entry is NaN
      const auto d = static_cast<std::size_t>(device);
      EXPECT_EQ(rounds_a[r].device_accuracy[d], rounds_b[r].device_accuracy[d]) << "round " << r;
    }
    EXPECT_EQ(rounds_a[r].bytes_up, rounds_b[r].bytes_up) << "round " << r;
    EXPECT_EQ(rounds_a[r].messages_up, rounds_b[r].messages_up) << "round " << r;
    EXPECT_EQ(rounds_a[r].bytes_down, rounds_b[r].bytes_down) << "round " << r;
    EXPECT_EQ(rounds_a[r].messages_down, rounds_b[r].messages_down) << "round " << r;
  }
}

TEST(AdaSplitJob, WithoutAnOrchestratorEveryDeviceUploadsEveryIteration) {
  const std::string file = run("all", 3, 8, "--adasplit.orchestrator=all");
  const auto rounds = trace::ResultsFile::read_rounds(file);
  ASSERT_EQ(rounds.size(), 3u);
  // local_fraction 0.4 of 3 rounds: floor(1.2) = 1 local round.
  EXPECT_EQ(rounds[0].messages_up, 0);
  EXPECT_EQ(rounds[1].messages_up, 8 * kDevices);
  EXPECT_EQ(rounds[2].messages_up, 8 * kDevices);
}

}  // namespace
}  // namespace cmlbed
