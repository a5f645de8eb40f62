#pragma once
// From a configuration's spec (plan_spec.hpp) and a profile to the schedule simulator's input: each device's
// stage lengths (its profile's layer times at every micro-batch size, stretched by its
// devices.slowdown, or its FLOPs / devices.flops), its links, mini-batches and sizes,
// as the runtime's methods would have them.
#include <optional>
#include <vector>

#include "cmlbed/config/settings.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/sim/profile.hpp"
#include "cmlbed/sim/schedule_simulator.hpp"
#include "cmlbed/planner/plan_spec.hpp"

namespace cmlbed::planner {

// Each device's share of the training set (index d-1), which sets its mini-batches, and
// the test set's size: reads and partitions the data set as a run would.
struct SampleCounts {
  std::vector<std::size_t> devices;
  std::size_t test = 0;
};
SampleCounts sample_counts(const Settings& settings, int devices);
std::vector<std::size_t> device_sample_counts(const Settings& settings, int devices);

// The server's evaluation between rounds (SimulationInput::evaluation_s), estimated from
// the profile: the whole model's forward per sample at the largest batch size it
// measured, over `test_samples` (adasplit: once per device's model). The runtime scores
// in batches of 500 without gradients, a little faster per sample: an upper estimate.
double evaluation_seconds(const PlanSpec& spec, const sim::Profile& profile, std::size_t test_samples,
                          int devices);

// Device d (1..samples.size()) takes its times from the profile's rank d when the
// profile has it, else from its last device rank (a profile of fewer ranks, e.g.
// `cmlbed simulate --devices N`). Throws ConfigError when the profile does not fit the configuration (another model or
// batch size too large for its measured sizes) or the method cannot be simulated, and
// std::invalid_argument when `spec` holds fewer devices than `samples`.
// `split` / `micro_batches`, when given, replace every device's model.split and
// pipar.micro_batches (a candidate of the planner).
struct PlanOverride {
  std::optional<std::size_t> split;
  std::optional<int> micro_batches;
};
sim::SimulationInput simulation_input(const PlanSpec& spec, const sim::Profile& profile,
                                       const std::vector<std::size_t>& samples, const PlanOverride& override = {});

}  // namespace cmlbed::planner
