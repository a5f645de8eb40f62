#pragma once
// One simulated round of localloss (src/train/local_loss.cpp): every device trains all of
// its mini-batches back to back on its own loss, the activation of every upload_every-th
// leaving after its step; the server trains on them index by index, in device order; in
// a round that averages, each device's part and head go up once its uploads are in, the
// server averages them and sends the average back.
#include "cmlbed/sim/schedule_simulator.hpp"
#include "round_recorder.hpp"

namespace cmlbed::sim {

SimulatedRound local_loss_round(const SimulationInput& input, RoundRecorder record);

}  // namespace cmlbed::sim
