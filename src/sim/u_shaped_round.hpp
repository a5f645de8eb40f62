#pragma once
// One simulated round of ushaped (src/train/u_shaped.cpp): per mini-batch index b, every
// device runs its head and uploads; the server runs each device's middle forward in
// device order, sending each output down; each device runs its tail forward and backward
// and uploads the gradient; the server runs each middle backward in device order, sends
// the head's gradient down and steps; the device runs its head backward and steps. In a
// round that averages, head and tail go up, the server averages every device's whole
// model and sends them back.
#include "cmlbed/sim/schedule_simulator.hpp"
#include "round_recorder.hpp"

namespace cmlbed::sim {

SimulatedRound u_shaped_round(const SimulationInput& input, RoundRecorder record);

}  // namespace cmlbed::sim
