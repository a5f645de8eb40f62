#pragma once
// A lower bound of a simulated round's wall time that needs no simulation: the planner
// simulates its candidates in the order of their bounds and skips those whose bound
// exceeds the best round it has simulated (search_plan), which chooses what simulating
// every candidate would.
//
// Why it holds: in a round of sfl, sfl2, pipar or psl (the methods the planner plans)
// every device runs each of its mini-batches' forwards, backwards and step one after the
// other on its compute thread, and the server runs a forward and a backward per
// micro-batch and a step per mini-batch on the device's stream (psl: one forward,
// backward and step per mini-batch index, on every device's samples together); the simulator never makes a stage shorter
// than its profile's length (wake-ups, shared cores and pacing only add), and a stream or
// a device thread runs one stage at a time. So a round lasts at least the longest
// device's stages, and at least the busiest stream's. Links, waits, averaging and
// wake-ups are left out: the bound is loose where they dominate, and then skips little.
#include <cstdint>
#include <vector>

#include "cmlbed/sim/schedule_simulator.hpp"

namespace cmlbed::sim {

// One device's stage seconds in a round, on its own thread and on the server's stream.
struct DeviceRoundWork {
  double device_s = 0;
  double server_s = 0;
};

// Device `device`'s work in one round of mini-batches of `batch_size`, each cut into
// `micro_batches`; server_s is 0 without a server part (fl).
DeviceRoundWork device_round_work(const SimulatedDevice& device, std::int64_t batch_size, int micro_batches);

// The bound from every device's work (index d-1), device d served on stream (d-1) mod
// `streams`.
double round_lower_bound_s(const std::vector<DeviceRoundWork>& work, int streams);

// psl: the one server part's work in a round of `input`, mini-batch b of the devices
// psl_batches lists served as one batch of their samples (not the sum of each device's
// server work, which overestimates a stage that costs less per sample in a larger batch).
double together_server_s(const SimulationInput& input);

}  // namespace cmlbed::sim
