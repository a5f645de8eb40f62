#include "local_loss_round.hpp"

#include <algorithm>

#include "cmlbed/sim/round_rules.hpp"

namespace cmlbed::sim {

using trace::EventKind;
using trace::MessageType;

SimulatedRound local_loss_round(const SimulationInput& in, RoundRecorder record) {
  const int devices = static_cast<int>(in.devices.size());
  const std::int64_t n = in.batch_size;
  const auto& dev = [&](int d) -> const SimulatedDevice& { return in.devices[static_cast<std::size_t>(d - 1)]; };
  const std::int64_t start = record.start_ns();
  std::int64_t most = 0;
  for (const SimulatedDevice& device : in.devices) most = std::max(most, device.batches);

  // The devices never wait: each uploads without waiting, and nothing comes back.
  std::vector<std::vector<std::int64_t>> arrival(static_cast<std::size_t>(devices + 1));  // [d][b]
  std::vector<std::int64_t> free(static_cast<std::size_t>(devices + 1), start);  // its last step's end
  std::vector<std::int64_t> sent = free;                                         // its last upload's arrival
  for (int d = 1; d <= devices; ++d) {
    auto& at = arrival[static_cast<std::size_t>(d)];
    at.assign(static_cast<std::size_t>(dev(d).batches), -1);
    for (int b = 0; b < dev(d).batches; ++b) {
      const std::int64_t stepped = train_batch(record, dev(d).part, d, b, n, free[static_cast<std::size_t>(d)]);
      free[static_cast<std::size_t>(d)] = stepped;
      if (b % in.upload_every != 0) continue;
      const std::int64_t bytes = n * (dev(d).activation_bytes_per_sample + 8);  // activation + int64 labels
      at[static_cast<std::size_t>(b)] = record.transfer(d, 0, MessageType::activation, bytes, stepped, b, 0);
      sent[static_cast<std::size_t>(d)] = at[static_cast<std::size_t>(b)];
    }
  }
  // The server: index by index, each index's uploads in device order, one server part.
  std::int64_t server = start;
  for (int b = 0; b < most; b += static_cast<int>(in.upload_every)) {
    for (int d = 1; d <= devices; ++d) {
      if (b >= dev(d).batches) continue;
      const std::int64_t in_at = arrival[static_cast<std::size_t>(d)][static_cast<std::size_t>(b)];
      server = train_batch(record, dev(d).server, 0, b, n, std::max(server, in_at));
    }
  }
  std::int64_t end = server;
  for (int d = 1; d <= devices; ++d) {
    end = std::max({end, free[static_cast<std::size_t>(d)], sent[static_cast<std::size_t>(d)]});
  }
  if (!averages_after(record.round(), in.aggregate_every, in.rounds)) return record.finish(end);

  // FedAvg of the parts and heads: each goes up once the device's uploads are delivered.
  std::int64_t all_in = server;
  double values = 0;
  for (int d = 1; d <= devices; ++d) {
    const std::int64_t ready = std::max(free[static_cast<std::size_t>(d)], sent[static_cast<std::size_t>(d)]);
    all_in = std::max(all_in, record.transfer(d, 0, MessageType::model, dev(d).part_state_values * 4, ready));
    values += static_cast<double>(dev(d).part_state_values);
  }
  const std::int64_t averaged =
      record.compute(0, EventKind::aggregate, all_in, work_stage(in.aggregate_s_per_parameter * values));
  end = std::max(end, averaged);
  for (int d = 1; d <= devices; ++d) {
    end = std::max(end, record.transfer(0, d, MessageType::model, dev(d).part_state_values * 4, averaged));
  }
  return record.finish(end);
}

}  // namespace cmlbed::sim
