#pragma once
// One simulated round of adasplit (src/train/adasplit_method.cpp): see AdaSplitSchedule.
#include "cmlbed/sim/schedule_simulator.hpp"
#include "round_recorder.hpp"

namespace cmlbed::sim {

SimulatedRound adasplit_round(const SimulationInput& input, RoundRecorder record);

}  // namespace cmlbed::sim
