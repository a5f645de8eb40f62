#include "u_shaped_round.hpp"

#include <algorithm>

#include "cmlbed/sim/round_rules.hpp"

namespace cmlbed::sim {

using trace::EventKind;
using trace::MessageType;

SimulatedRound u_shaped_round(const SimulationInput& in, RoundRecorder record) {
  const int devices = static_cast<int>(in.devices.size());
  const std::int64_t n = in.batch_size;
  const auto& dev = [&](int d) -> const SimulatedDevice& { return in.devices[static_cast<std::size_t>(d - 1)]; };
  const std::int64_t start = record.start_ns();
  std::int64_t most = 0;
  for (const SimulatedDevice& device : in.devices) most = std::max(most, device.batches);
  const auto index = [](int d) { return static_cast<std::size_t>(d); };
  std::vector<std::int64_t> free(index(devices + 1), start);  // each device's compute thread
  std::vector<std::int64_t> up(index(devices + 1)), down(index(devices + 1));
  std::int64_t server = start;
  for (int b = 0; b < most; ++b) {
    const auto has = [&](int d) { return b < dev(d).batches; };
    for (int d = 1; d <= devices; ++d) {  // heads
      if (!has(d)) continue;
      free[index(d)] = record.compute(d, EventKind::forward, free[index(d)], forward_stage(dev(d).part, n), b, 0);
      const std::int64_t bytes = n * dev(d).activation_bytes_per_sample;  // no labels
      up[index(d)] = record.transfer(d, 0, MessageType::activation, bytes, free[index(d)], b, 0);
    }
    for (int d = 1; d <= devices; ++d) {  // the middles forward, then each device's tail
      if (!has(d)) continue;
      server = record.compute(0, EventKind::forward, std::max(server, up[index(d)]), forward_stage(dev(d).server, n),
                              b, 0);
      const std::int64_t middle = n * dev(d).middle_bytes_per_sample;
      const std::int64_t arrived = record.transfer(0, d, MessageType::activation, middle, server, b, 0);
      std::int64_t t = std::max(free[index(d)], arrived);
      t = record.compute(d, EventKind::forward, t, forward_stage(dev(d).tail, n), b, 0);
      t = record.compute(d, EventKind::backward, t, backward_stage(dev(d).tail, n), b, 0);
      free[index(d)] = t;
      up[index(d)] = record.transfer(d, 0, MessageType::gradient, middle, t, b, 0);
    }
    for (int d = 1; d <= devices; ++d) {  // the middles backward, then each device's head
      if (!has(d)) continue;
      server = record.compute(0, EventKind::backward, std::max(server, up[index(d)]),
                              backward_stage(dev(d).server, n), b, 0);
      down[index(d)] = record.transfer(0, d, MessageType::gradient, n * dev(d).activation_bytes_per_sample, server,
                                       b, 0);
      server = record.compute(0, EventKind::step, server, step_stage(dev(d).server), b);
      std::int64_t t = std::max(free[index(d)], down[index(d)]);
      t = record.compute(d, EventKind::backward, t, backward_stage(dev(d).part, n), b, 0);
      t = record.compute(d, EventKind::step, t, step_stage(dev(d).part), b);
      free[index(d)] = record.compute(d, EventKind::step, t, step_stage(dev(d).tail), b);
    }
  }
  std::int64_t end = std::max(server, *std::max_element(free.begin(), free.end()));
  if (!averages_after(record.round(), in.aggregate_every, in.rounds)) return record.finish(end);

  // FedAvg of every device's whole model (head, middle and tail), by layer.
  std::int64_t all_in = server;
  for (int d = 1; d <= devices; ++d) {
    const std::int64_t bytes = (dev(d).part_state_values + dev(d).tail_state_values) * 4;
    all_in = std::max(all_in, record.transfer(d, 0, MessageType::model, bytes, free[index(d)]));
  }
  const double values = static_cast<double>(in.model_state_values) * devices;
  const std::int64_t averaged =
      record.compute(0, EventKind::aggregate, all_in, work_stage(in.aggregate_s_per_parameter * values));
  end = std::max(end, averaged);
  for (int d = 1; d <= devices; ++d) {
    const std::int64_t bytes = (dev(d).part_state_values + dev(d).tail_state_values) * 4;
    end = std::max(end, record.transfer(0, d, MessageType::model, bytes, averaged));
  }
  return record.finish(end);
}

}  // namespace cmlbed::sim
