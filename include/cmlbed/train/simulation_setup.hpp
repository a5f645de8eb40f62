#pragma once
// From a configuration and a profile to the schedule simulator's input: each device's
// stage lengths (its profile's layer times at every micro-batch size, stretched by its
// devices.slowdown, or its FLOPs / devices.flops), its links, mini-batches and sizes,
// as the runtime's methods would have them.
#include "cmlbed/config/config.hpp"
#include "cmlbed/plan/profile.hpp"
#include "cmlbed/plan/schedule_simulator.hpp"

namespace cmlbed::train {

// Device d takes its times from the profile's rank d when the profile has it, else from
// its last device rank (a profile of fewer ranks, e.g. `cmlbed simulate --devices N`).
// Reads the data set to partition it (each device's share sets its mini-batches).
// Throws ConfigError when the profile does not fit the configuration (another model or
// batch size too large for its measured sizes) or the method cannot be simulated.
plan::SimulationInput simulation_input(const Config& config, const plan::Profile& profile, int devices);

}  // namespace cmlbed::train
