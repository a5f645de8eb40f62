#include "cmlbed/sim/round_bound.hpp"

#include <algorithm>
#include <stdexcept>

#include "cmlbed/sim/round_rules.hpp"
#include "round_recorder.hpp"

namespace cmlbed::sim {
namespace {

// The simulator books each stage's length rounded to whole nanoseconds, so a stage may
// last half a nanosecond less than its profile's seconds: the bound takes that off.
constexpr double kBookingSlack_s = 0.5e-9;

// One mini-batch's forwards and backwards on `part`, cut into `sizes`, and its step.
double mini_batch_s(const SimulatedPart& part, const std::vector<std::int64_t>& sizes) {
  double seconds = part.step_s - kBookingSlack_s;
  for (const std::int64_t n : sizes) seconds += at(part.forward_s, n) + at(part.backward_s, n) - 2 * kBookingSlack_s;
  return std::max(0.0, seconds);
}

}  // namespace

DeviceRoundWork device_round_work(const SimulatedDevice& device, std::int64_t batch_size, int micro_batches) {
  const std::vector<std::int64_t> sizes = micro_batch_sizes(batch_size, micro_batches);
  const auto batches = static_cast<double>(device.batches);
  DeviceRoundWork work;
  work.device_s = batches * mini_batch_s(device.part, sizes);
  if (!device.server.forward_s.empty()) work.server_s = batches * mini_batch_s(device.server, sizes);
  return work;
}

double round_lower_bound_s(const std::vector<DeviceRoundWork>& work, int streams) {
  if (streams < 1) throw std::invalid_argument("round bound: streams < 1");
  std::vector<double> stream_s(static_cast<std::size_t>(streams), 0.0);
  double longest_device = 0;
  for (std::size_t d = 0; d < work.size(); ++d) {
    longest_device = std::max(longest_device, work[d].device_s);
    stream_s[d % stream_s.size()] += work[d].server_s;
  }
  return std::max(longest_device, *std::max_element(stream_s.begin(), stream_s.end()));
}

double together_server_s(const SimulationInput& input) {
  std::vector<std::int64_t> batches;
  for (const SimulatedDevice& device : input.devices) batches.push_back(device.batches);
  double seconds = 0;
  for (const std::vector<int>& devices : psl_batches(batches)) {
    const SimulatedPart& server = input.devices[static_cast<std::size_t>(devices.front() - 1)].server;  // one for all
    const std::int64_t n = input.batch_size * static_cast<std::int64_t>(devices.size());
    seconds += at(server.forward_s, n) + at(server.backward_s, n) + server.step_s - 3 * kBookingSlack_s;
  }
  return std::max(0.0, seconds);
}

}  // namespace cmlbed::sim
