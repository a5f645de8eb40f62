#include "adasplit_round.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cmlbed::sim {

using trace::MessageType;

SimulatedRound adasplit_round(const SimulationInput& in, RoundRecorder record) {
  const int devices = static_cast<int>(in.devices.size());
  const std::int64_t n = in.batch_size;
  const auto& dev = [&](int d) -> const SimulatedDevice& { return in.devices[static_cast<std::size_t>(d - 1)]; };
  std::int64_t batches = 0;
  for (const SimulatedDevice& device : in.devices) batches = std::max(batches, device.batches);
  std::vector<std::int64_t> free(static_cast<std::size_t>(devices + 1), record.start_ns());  // index d
  std::vector<std::int64_t> done = free;  // d: its last upload delivered too

  const int global = record.round() - in.adasplit.local_rounds;
  if (global < 0) {  // local phase: the devices alone
    for (int d = 1; d <= devices; ++d) {
      for (int b = 0; b < dev(d).batches; ++b) {
        free[static_cast<std::size_t>(d)] = train_batch(record, dev(d).part, d, b, n, free[static_cast<std::size_t>(d)]);
      }
      done[static_cast<std::size_t>(d)] = free[static_cast<std::size_t>(d)];
    }
    return record.finish(*std::max_element(done.begin(), done.end()));
  }
  if (static_cast<std::size_t>(global) >= in.adasplit.chosen.size()) {
    throw std::invalid_argument("simulate: adasplit has no orchestrator picks for round " +
                                std::to_string(record.round()));
  }
  const auto& picks = in.adasplit.chosen[static_cast<std::size_t>(global)];

  // Mini-batch index by index: the server starts b once done with b - 1 (its word to the
  // devices leaves then), so each index needs only what the one before it settled.
  std::int64_t server = record.start_ns();
  for (int b = 0; b < batches; ++b) {
    if (static_cast<std::size_t>(b) >= picks.size()) {
      throw std::invalid_argument("simulate: adasplit has no orchestrator picks for mini-batch " + std::to_string(b));
    }
    const std::vector<int>& chosen = picks[static_cast<std::size_t>(b)];
    std::vector<std::int64_t> upload(static_cast<std::size_t>(devices + 1), -1);  // arrival, for the chosen
    for (int d = 1; d <= devices; ++d) {
      if (b >= dev(d).batches) continue;
      const std::int64_t word =
          record.transfer(0, d, MessageType::control, in.control_bytes, server, b);
      const std::int64_t stepped = train_batch(record, dev(d).part, d, b, n, free[static_cast<std::size_t>(d)]);
      // The device waits for the word after its step, then uploads (without waiting).
      const std::int64_t released = std::max(stepped, word);
      free[static_cast<std::size_t>(d)] = released;
      done[static_cast<std::size_t>(d)] = std::max(done[static_cast<std::size_t>(d)], released);
      if (std::binary_search(chosen.begin(), chosen.end(), d)) {
        const std::int64_t bytes = n * (dev(d).activation_bytes_per_sample + 8);  // activation + int64 labels
        const std::int64_t arrival = record.transfer(d, 0, MessageType::activation, bytes, released, b, 0);
        upload[static_cast<std::size_t>(d)] = arrival;
        done[static_cast<std::size_t>(d)] = std::max(done[static_cast<std::size_t>(d)], arrival);
      }
    }
    for (int d : chosen) {  // in device order, one shared server part
      if (d < 1 || d > devices || upload[static_cast<std::size_t>(d)] < 0) {
        throw std::invalid_argument("simulate: adasplit picked device " + std::to_string(d) + " for mini-batch " +
                                    std::to_string(b) + ", which has none");
      }
      server = train_batch(record, dev(d).server, 0, b, n, std::max(server, upload[static_cast<std::size_t>(d)]));
    }
  }
  return record.finish(std::max(server, *std::max_element(done.begin(), done.end())));
}

}  // namespace cmlbed::sim
