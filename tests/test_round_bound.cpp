// sim::round_lower_bound_s and device_round_work on hand-worked numbers: a device's
// stages summed over its mini-batches and micro-batches, the server's per stream, the
// larger of the longest device and the busiest stream. That the bound never exceeds a
// simulated round is checked against the simulator in test_parameter_search.cpp.
#include <gtest/gtest.h>

#include <stdexcept>

#include "cmlbed/sim/round_bound.hpp"

namespace cmlbed::sim {
namespace {

// A part whose forward of n samples takes n x `per_sample`, backward twice that.
SimulatedPart linear_part(double per_sample, double step_s, std::int64_t most_samples) {
  SimulatedPart part;
  for (std::int64_t n = 0; n <= most_samples; ++n) {
    part.forward_s.push_back(per_sample * static_cast<double>(n));
    part.backward_s.push_back(2 * per_sample * static_cast<double>(n));
  }
  part.step_s = step_s;
  return part;
}

TEST(RoundBound, DeviceWorkSumsEveryStageOfTheRound) {
  SimulatedDevice device;
  device.batches = 3;
  device.part = linear_part(1e-3, 0.01, 8);
  device.server = linear_part(5e-4, 0.002, 8);
  // 3 mini-batches of 8 in 2 micro-batches of 4: (step + 2 x (forward + backward of 4)).
  const DeviceRoundWork work = device_round_work(device, 8, 2);
  EXPECT_NEAR(work.device_s, 3 * (0.01 + 2 * (0.004 + 0.008)), 1e-8);
  EXPECT_NEAR(work.server_s, 3 * (0.002 + 2 * (0.002 + 0.004)), 1e-8);
  // Whole mini-batches: one forward and backward of 8 each.
  EXPECT_NEAR(device_round_work(device, 8, 1).device_s, 3 * (0.01 + 0.008 + 0.016), 1e-8);
}

TEST(RoundBound, WithoutAServerPartTheServerHasNoWork) {
  SimulatedDevice device;
  device.part = linear_part(1e-3, 0.01, 4);
  EXPECT_EQ(device_round_work(device, 4, 1).server_s, 0.0);
}

TEST(RoundBound, TheLongestDeviceOrTheBusiestStream) {
  const std::vector<DeviceRoundWork> work = {{0.1, 0.05}, {0.2, 0.01}, {0.05, 0.04}, {0.01, 0.3}};
  EXPECT_NEAR(round_lower_bound_s(work, 1), 0.40, 1e-8);  // one stream serves all
  EXPECT_NEAR(round_lower_bound_s(work, 2), 0.31, 1e-8);  // devices 2 and 4 on stream 2
  EXPECT_NEAR(round_lower_bound_s(work, 4), 0.30, 1e-8);  // a stream each
  EXPECT_NEAR(round_lower_bound_s({{0.2, 0.0}, {0.5, 0.0}}, 1), 0.5, 1e-8);  // fl: the devices
}

// psl: mini-batch b of every device that has one is one server batch. A stage with a
// cost per call (10 ms forward, 20 ms backward) costs less together than device by device.
TEST(RoundBound, PslServesEachMiniBatchOfEveryDeviceAsOneBatch) {
  SimulatedPart server;
  for (std::int64_t n = 0; n <= 8; ++n) {
    server.forward_s.push_back(n == 0 ? 0.0 : 0.01 + 1e-3 * static_cast<double>(n));
    server.backward_s.push_back(n == 0 ? 0.0 : 0.02 + 2e-3 * static_cast<double>(n));
  }
  server.step_s = 0.005;
  SimulationInput input;
  input.method = "psl";
  input.batch_size = 4;
  input.devices.resize(2);
  input.devices[0].batches = 2;
  input.devices[1].batches = 1;
  for (SimulatedDevice& device : input.devices) {
    device.part = linear_part(1e-3, 0.01, 4);
    device.server = server;
  }
  // b = 0: both devices, 8 samples (0.018 + 0.036 + 0.005); b = 1: device 1, 4 samples.
  EXPECT_NEAR(together_server_s(input), 0.059 + 0.047, 1e-8);
  double device_by_device = 0;
  for (const SimulatedDevice& device : input.devices) device_by_device += device_round_work(device, 4, 1).server_s;
  EXPECT_NEAR(device_by_device, 0.141, 1e-8);  // what the per-device bound would have claimed
}

TEST(RoundBound, RefusesWhatItCannotBound) {
  EXPECT_THROW(round_lower_bound_s({{0.1, 0.1}}, 0), std::invalid_argument);
  SimulatedDevice device;
  device.part = linear_part(1e-3, 0.01, 4);
  EXPECT_THROW(device_round_work(device, 8, 1), std::invalid_argument);  // no length for 8 samples
}

}  // namespace
}  // namespace cmlbed::sim
