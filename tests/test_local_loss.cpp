// Local-loss split learning (experiment.method = localloss) under mpirun, against its
// mathematics:
//  - no gradient comes back, so what the devices learn does not depend on the server:
//    the averaged device part and head are bit for bit the same whatever the server does
//    with the uploads (every mini-batch uploaded, or none but the first);
//  - its bytes are the schedule's arithmetic: per device, the activation and labels of
//    every h-th mini-batch and the part and head up, the averaged part and head down;
//  - refused before the run: a split without layers on both sides, personalised, auto.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sys/wait.h>

#include "cmlbed/model/split_model.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "cmlbed/train/contrastive_objective.hpp"
#include "cmlbed/train/tensor_codec.hpp"
#include "method_runs.hpp"

namespace cmlbed::train {
namespace {

class LocalLossMethod : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(env("CMLBED_BINARY").empty()) << "CMLBED_BINARY is not set"; }
};

TEST_F(LocalLossMethod, DevicesLearnTheSameWhateverTheServerDoes) {
  const std::vector<std::string> options = {"--experiment.method=localloss", "--experiment.rounds=2"};
  const std::string every = run(3, "ll_every", plus(options, {"--localloss.upload_every=1"}));
  const std::string first = run(3, "ll_first", plus(options, {"--localloss.upload_every=1000"}));
  EXPECT_EQ(trace::ResultsFile::read_model(every, "device"), trace::ResultsFile::read_model(first, "device"));
  EXPECT_EQ(trace::ResultsFile::read_model(every, "head"), trace::ResultsFile::read_model(first, "head"));
  // The server part is what differs: it trained on 6 uploads per device and round, or on 1.
  EXPECT_NE(trace::ResultsFile::read_model(every, "server"), trace::ResultsFile::read_model(first, "server"));
}

TEST_F(LocalLossMethod, SendsEveryHthActivationUpAndTheAveragedPartDown) {
  constexpr int kDevices = 3, kIterations = 7, kBatch = 16, kEvery = 3;
  const std::string file =
      run(kDevices + 1, "ll_bytes",
          {"--experiment.method=localloss", "--train.local_iterations=" + std::to_string(kIterations),
           "--localloss.upload_every=" + std::to_string(kEvery), "--localloss.head_hidden=8"});
  model::ModelOptions options;
  options.name = "lenet";
  options.input = ImageShape{1, 28, 28};
  options.classes = 10;
  const auto stats = model::layer_stats(options);
  // model.split = 2: the output of layer 1, float32, and an int64 label per sample.
  const std::int64_t activation = stats.at(1).activation_bytes_per_sample;
  model::ModelPart part(options, 0, 2, 1);
  ProjectionHead head(stats.at(1).output_shape, 8, 10, 1);
  const std::int64_t side_bytes = 4 * (flat_state(part).numel() + flat_state(head).numel());
  const std::int64_t uploads = (kIterations + kEvery - 1) / kEvery;  // mini-batches 0, 3, 6
  for (const trace::RoundRecord& r : trace::ResultsFile::read_rounds(file)) {
    EXPECT_EQ(r.bytes_up, kDevices * (uploads * kBatch * (activation + 8) + side_bytes)) << r.round;
    EXPECT_EQ(r.bytes_down, kDevices * side_bytes) << r.round;
    EXPECT_EQ(r.messages_up, kDevices * (uploads + 1)) << r.round;
    EXPECT_EQ(r.messages_down, kDevices) << r.round;
  }
}

TEST_F(LocalLossMethod, RefusesWhatItCannotTrain) {
  const auto refused = [](const std::string& options) {
    const std::string command = env("CMLBED_BINARY") + " run --dry-run --ranks 3 --experiment.method=localloss " +
                                options + " > /dev/null 2>&1";
    return WEXITSTATUS(std::system(command.c_str()));
  };
  EXPECT_EQ(refused(""), 0);
  EXPECT_EQ(refused("--model.split=0"), 2);  // no device part for the head to train
  EXPECT_EQ(refused("--model.split=7"), 2);  // lenet: no server part
  EXPECT_EQ(refused("--device.1.split=1"), 2);
  EXPECT_EQ(refused("--train.personalised=true"), 2);
  EXPECT_EQ(refused("--model.split=auto"), 2);
  EXPECT_EQ(refused("--localloss.upload_every=0"), 2);
}

}  // namespace
}  // namespace cmlbed::train
