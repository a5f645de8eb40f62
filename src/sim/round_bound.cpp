#include "cmlbed/sim/round_bound.hpp"

#include <algorithm>
#include <stdexcept>

#include "round_recorder.hpp"

namespace cmlbed::sim {
namespace {

// One mini-batch's forwards and backwards on `part`, cut into `sizes`, and its step.
double mini_batch_s(const SimulatedPart& part, const std::vector<std::int64_t>& sizes) {
  double seconds = part.step_s;
  for (const std::int64_t n : sizes) seconds += at(part.forward_s, n) + at(part.backward_s, n);
  return seconds;
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

}  // namespace cmlbed::sim
