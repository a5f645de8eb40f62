#pragma once
// Before round 1: whether this host can hold the devices' pace for a run as configured,
// predicted by the simulator from a profile of this host with the ranks sharing the cores
// they are placed on (plan.host_cores), and, where it cannot, the fastest device speed and
// the most devices it can (docs/explanation/fidelity.md). plan.check_pacing decides what
// a run does with the answer.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cmlbed/sim/profile.hpp"
#include "cmlbed/planner/parameter_search.hpp"
#include "cmlbed/planner/plan_spec.hpp"

namespace cmlbed::planner {

struct PacingCheck {
  bool held = false;         // some device is paced or stretched: there is a pace to keep
  PlanCandidate predicted;   // the run's own plan on this host
  // Where it does not keep pace: the largest factor (< 1) the devices' speeds
  // (devices.flops) may be multiplied by and keep it (none: no paced device, or not even
  // at 1/4096); and the most devices (< the run's) that keep it (none: not even 1).
  std::optional<double> rate_factor;
  std::optional<double> fastest_flops;  // device 1's devices.flops times rate_factor, FLOP/s
  std::optional<int> devices;
  bool keeps_pace() const { return !held || predicted.keeps_pace(); }
  // "this host keeps the devices' pace (predicted overrun 0.1% of held time; 4 ranks on
  // 2 shared cores ...)" or what it can keep instead.
  std::string text() const;
};

// Whether some device of `spec` is held to a pace: paced (devices.flops), or stretched
// (devices.slowdown > 1) on one thread.
bool any_device_held(const PlanSpec& spec);

// `spec_of(n)` gives the run's spec for n devices (its plan.host_cores resolved for the
// run's placement), `samples_of(n)` each device's training samples.
PacingCheck check_pacing(const std::function<PlanSpec(int devices)>& spec_of,
                         const std::function<std::vector<std::size_t>(int devices)>& samples_of,
                         const sim::Profile& profile, int devices);

}  // namespace cmlbed::planner
