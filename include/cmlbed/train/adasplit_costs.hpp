#pragma once
// AdaSplit's settings and the FLOPs its stages count, public so that the planner's
// simulator input (planner/simulation_setup.cpp) books the same work as the method
// (adasplit_method.cpp); adasplit_costs.cpp defines them.
#include <cstdint>

#include "cmlbed/config/settings.hpp"
#include "cmlbed/model/part_cost.hpp"
#include "cmlbed/train/orchestrator.hpp"

namespace cmlbed::train {

struct AdaSplitSettings {
  int local_rounds = 0;  // floor(local_fraction x rounds)
  int selected = 3;
  OrchestratorPolicy policy = OrchestratorPolicy::ucb;
  double discount = 0.75;
  double temperature = 0.07;
  double l1 = 1e-4;
  std::int64_t embedding_dim = 64;
  std::int64_t head_channels = 128;
};
AdaSplitSettings adasplit_settings(const Settings& settings);

// The FLOPs AdaSplit's compute stages count for a batch of n samples (the runtime's
// stages and the schedule simulator use these same figures).
// Device: its part, the projection head (forward `head_forward` per sample; backward its
// weight and input gradients, 2x) and the contrastive loss over the batch.
double adasplit_device_forward_flops(const model::PartCost& device, double head_forward, std::int64_t n,
                                     std::int64_t embedding_dim);
double adasplit_device_backward_flops(const model::PartCost& device, double head_forward, std::int64_t n,
                                      std::int64_t embedding_dim);
// Server: its part (no gradient goes back, so none for its input) and the elementwise
// mask work per entry.
double adasplit_server_forward_flops(const model::PartCost& server, std::int64_t mask_entries, std::int64_t n);
double adasplit_server_backward_flops(const model::PartCost& server, std::int64_t mask_entries, std::int64_t n);

}  // namespace cmlbed::train
