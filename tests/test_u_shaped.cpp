// U-shaped split learning (experiment.method = ushaped) under mpirun, against its
// mathematics:
//  - with an empty middle (ushaped.tail = model.split) and one device it is fl with one
//    device, weight for weight: the server's middle passes the activation through and
//    its gradient back;
//  - labels never leave a device: every activation a device sends is the head's output
//    alone (n x its bytes, no label bytes), and the round's bytes are the schedule's
//    arithmetic: per mini-batch the head's output and the middle's output's gradient up,
//    the middle's output and the head's output's gradient down, and head and tail once;
//  - refused before the run: a tail before a device's cut or beyond the model,
//    personalised, auto, server streams.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sys/wait.h>

#include "cmlbed/model/split_model.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "cmlbed/train/tensor_codec.hpp"
#include "method_runs.hpp"

namespace cmlbed::train {
namespace {

class UShapedMethod : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(env("CMLBED_BINARY").empty()) << "CMLBED_BINARY is not set"; }
};

TEST_F(UShapedMethod, WithAnEmptyMiddleAndOneDeviceIsFl) {
  const std::string ushaped = run(2, "us_empty", {"--experiment.method=ushaped", "--ushaped.tail=2"});
  const std::string fl = run(2, "us_fl", {"--experiment.method=fl"});
  EXPECT_LE(relative_difference(trace::ResultsFile::read_model(ushaped, "model"),
                                trace::ResultsFile::read_model(fl, "model")),
            1e-6);
}

TEST_F(UShapedMethod, LabelsNeverLeaveAndBytesAreTheSchedulesArithmetic) {
  constexpr int kDevices = 2, kIterations = 4, kBatch = 16, kTail = 5;
  const std::string file =
      run(kDevices + 1, "us_bytes",
          {"--experiment.method=ushaped", "--ushaped.tail=" + std::to_string(kTail),
           "--train.local_iterations=" + std::to_string(kIterations)});
  model::ModelOptions options;
  options.name = "lenet";
  options.input = ImageShape{1, 28, 28};
  options.classes = 10;
  const auto stats = model::layer_stats(options);
  const std::int64_t head_out = stats.at(1).activation_bytes_per_sample;        // model.split = 2
  const std::int64_t middle_out = stats.at(kTail - 1).activation_bytes_per_sample;
  model::ModelPart head(options, 0, 2, 1), tail(options, kTail, stats.size(), 1);
  const std::int64_t sides = 4 * (flat_state(head).numel() + flat_state(tail).numel());
  const std::int64_t per_batch = kBatch * (head_out + middle_out);
  for (const trace::RoundRecord& r : trace::ResultsFile::read_rounds(file)) {
    EXPECT_EQ(r.bytes_up, kDevices * (kIterations * per_batch + sides)) << r.round;
    EXPECT_EQ(r.bytes_down, kDevices * (kIterations * per_batch + sides)) << r.round;
    EXPECT_EQ(r.messages_up, kDevices * (2 * kIterations + 1)) << r.round;
  }
  // The message log: what each device sent as an activation is the head's output alone.
  for (int device = 1; device <= kDevices; ++device) {
    int activations = 0;
    for (const trace::Event& e : trace::ResultsFile::read_events(file, device)) {
      if (e.kind != trace::EventKind::send || e.message != trace::MessageType::activation) continue;
      EXPECT_EQ(e.bytes, kBatch * head_out) << "device " << device << ": more than the activation left it";
      ++activations;
    }
    EXPECT_EQ(activations, 2 * kIterations) << "device " << device;
  }
}

TEST_F(UShapedMethod, RefusesWhatItCannotCut) {
  const auto refused = [](const std::string& options) {
    const std::string command = env("CMLBED_BINARY") + " run --dry-run --ranks 3 --experiment.method=ushaped " +
                                options + " > /dev/null 2>&1";
    return WEXITSTATUS(std::system(command.c_str()));
  };
  EXPECT_EQ(refused(""), 0);
  EXPECT_EQ(refused("--ushaped.tail=1"), 2);   // before the default split 4 of vgg5
  EXPECT_EQ(refused("--ushaped.tail=8"), 2);   // vgg5 has 7 layers
  EXPECT_EQ(refused("--device.2.split=6 --ushaped.tail=5"), 2);
  EXPECT_EQ(refused("--device.2.split=2"), 0);  // a cut per device: a middle per device
  EXPECT_EQ(refused("--train.personalised=true"), 2);
  EXPECT_EQ(refused("--model.split=auto"), 2);
  EXPECT_EQ(refused("--train.server_streams=2"), 2);
}

}  // namespace
}  // namespace cmlbed::train
