// Parallel split learning (experiment.method = psl) under mpirun, against its mathematics:
//  - with one device it is sl with one device, weight for weight;
//  - one mini-batch of two devices: the server part takes the step of the whole model on
//    the two mini-batches concatenated, and the average of the two device parts is the
//    whole model's device layers after that step (each device stepped on its own
//    mini-batch's mean loss);
//  - its bytes are the schedule's arithmetic: per device and mini-batch, the activation
//    and the labels up, the activation's gradient down, and nothing else (no device part
//    is ever averaged);
//  - one split for all devices (one server part), which auto may choose; train.personalised
//    and plan.replan are refused before the run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sys/wait.h>

#include "cmlbed/data/partition.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "cmlbed/train/local_training.hpp"
#include "cmlbed/train/tensor_codec.hpp"
#include "method_runs.hpp"

namespace cmlbed::train {
namespace {

class Psl : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(env("CMLBED_BINARY").empty()) << "CMLBED_BINARY is not set"; }
};

// Device d's part followed by the server part: the whole model psl gives device d.
std::vector<float> whole_of(const std::string& file, int device) {
  std::vector<float> weights = trace::ResultsFile::read_model(file, "device_" + std::to_string(device));
  const std::vector<float> server = trace::ResultsFile::read_model(file, "server_" + std::to_string(device));
  weights.insert(weights.end(), server.begin(), server.end());
  return weights;
}

// train.optimizer_state = keep: sl's device part, handed back to the device each turn,
// keeps its momentum, as psl's, which never leaves the device.
TEST_F(Psl, WithOneDeviceIsSl) {
  const std::string psl = run(2, "psl_one", {"--experiment.method=psl", "--train.optimizer_state=keep"});
  const std::string sl = run(2, "sl_one", {"--experiment.method=sl", "--train.optimizer_state=keep"});
  EXPECT_LE(relative_difference(whole_of(psl, 1), trace::ResultsFile::read_model(sl, "model")), 1e-6);
}

TEST_F(Psl, OneStepIsTheWholeModelsStepOnTheConcatenatedMiniBatches) {
  const std::vector<std::string> options = {"--experiment.method=psl", "--experiment.rounds=1",
                                            "--train.local_iterations=1", "--train.momentum=0"};
  const std::string file = run(3, "psl_step", options);

  // The reference: the whole model, one SGD step on device 1's and device 2's first
  // mini-batches together, with the mean loss over both.
  const Config config = config_of(with(options));
  const TrainingSettings s = training_settings(config);
  const data::Dataset dataset = load_dataset(config);
  const auto parts =
      data::partition_indices(dataset.train.labels, dataset.train.num_classes, partition_spec(config, 2));
  std::vector<std::size_t> both;
  for (int device = 1; device <= 2; ++device) {
    const LocalBatches batches(parts[static_cast<std::size_t>(device - 1)], s.seed, device);
    const auto first = batches.round(0, s).at(0);
    both.insert(both.end(), first.begin(), first.end());
  }
  model::ModelPart whole(s.model, 0, model::layer_count(s.model), s.seed);
  auto optimizer = make_optimizer(whole, s);
  batch_loss(whole.forward(images_tensor(dataset.train, both)), labels_tensor(dataset.train, both),
             static_cast<std::int64_t>(both.size()))
      .backward();
  optimizer->step();
  const std::vector<float> reference = flat_state_values(whole);

  std::vector<float> average = trace::ResultsFile::read_model(file, "device_1");
  const std::vector<float> second = trace::ResultsFile::read_model(file, "device_2");
  ASSERT_EQ(average.size(), second.size());
  for (std::size_t i = 0; i < average.size(); ++i) average[i] = (average[i] + second[i]) / 2;
  const std::vector<float> server = trace::ResultsFile::read_model(file, "server_1");
  EXPECT_EQ(server, trace::ResultsFile::read_model(file, "server_2")) << "one server part";
  average.insert(average.end(), server.begin(), server.end());
  EXPECT_LE(relative_difference(average, reference), 1e-6);
  // The device parts differ: each stepped on its own mini-batch.
  EXPECT_NE(trace::ResultsFile::read_model(file, "device_1"), second);
}

TEST_F(Psl, SendsActivationsUpAndTheirGradientsDownOnly) {
  constexpr int kDevices = 3, kIterations = 4, kBatch = 16;
  const std::string file = run(kDevices + 1, "psl_bytes",
                               {"--experiment.method=psl", "--experiment.rounds=2",
                                "--train.local_iterations=" + std::to_string(kIterations)});
  model::ModelOptions options;
  options.name = "lenet";
  options.input = ImageShape{1, 28, 28};
  // model.split = 2: the output of layer 1, float32, and an int64 label per sample.
  const std::int64_t activation = model::layer_stats(options).at(1).activation_bytes_per_sample;
  for (const trace::RoundRecord& r : trace::ResultsFile::read_rounds(file)) {
    EXPECT_EQ(r.bytes_up, kDevices * kIterations * kBatch * (activation + 8)) << r.round;
    EXPECT_EQ(r.bytes_down, kDevices * kIterations * kBatch * activation) << r.round;
    EXPECT_EQ(r.messages_up, kDevices * kIterations) << r.round;
    EXPECT_EQ(r.messages_down, kDevices * kIterations) << r.round;
  }
}

TEST_F(Psl, RefusesWhatOneServerPartCannotServe) {
  const auto refused = [](const std::string& options) {
    const std::string command = env("CMLBED_BINARY") + " run --dry-run --ranks 3 --experiment.method=psl " +
                                options + " > /dev/null 2>&1";
    return WEXITSTATUS(std::system(command.c_str()));
  };
  EXPECT_EQ(refused(""), 0);
  EXPECT_EQ(refused("--device.1.split=1"), 2);
  EXPECT_EQ(refused("--train.personalised=true"), 2);
  EXPECT_EQ(refused("--model.split=auto"), 0);  // one cut for all, chosen by the planner
  EXPECT_EQ(refused("--model.split=auto --plan.replan=on_change"), 2);
}

}  // namespace
}  // namespace cmlbed::train
