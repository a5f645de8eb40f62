#include "cmlbed/train/adasplit_costs.hpp"

#include "cmlbed/sim/round_rules.hpp"
#include "cmlbed/train/contrastive_objective.hpp"

namespace cmlbed::train {
namespace {

// FLOPs per mask entry of the masked server, estimated from the elementwise work:
// forward W * sigmoid(M) (sigmoid ~4, product 1) and the L1 term sum(sigmoid(M)) (~5);
// backward the product's two gradients, sigmoid's derivative and the L1 term's (~8).
constexpr double kMaskForwardFlops = 10;
constexpr double kMaskBackwardFlops = 8;

}  // namespace

double adasplit_device_forward_flops(const model::PartCost& device, double head_forward, std::int64_t n,
                                     std::int64_t embedding_dim) {
  return static_cast<double>(n) * (device.forward_per_sample + head_forward) + nt_xent_forward_flops(n, embedding_dim);
}

double adasplit_device_backward_flops(const model::PartCost& device, double head_forward, std::int64_t n,
                                      std::int64_t embedding_dim) {
  return static_cast<double>(n) * (device.backward_per_sample + 2 * head_forward) +
         2 * nt_xent_forward_flops(n, embedding_dim);
}

double adasplit_server_forward_flops(const model::PartCost& server, std::int64_t mask_entries, std::int64_t n) {
  return static_cast<double>(n) * server.forward_per_sample + kMaskForwardFlops * static_cast<double>(mask_entries);
}

double adasplit_server_backward_flops(const model::PartCost& server, std::int64_t mask_entries, std::int64_t n) {
  return static_cast<double>(n) * server.backward_per_sample + kMaskBackwardFlops * static_cast<double>(mask_entries);
}

AdaSplitSettings adasplit_settings(const Settings& settings) {
  AdaSplitSettings s;
  s.local_rounds = sim::adasplit_local_rounds(settings.adasplit.local_fraction,
                                               static_cast<int>(settings.experiment.rounds));
  s.selected = static_cast<int>(settings.adasplit.selected);
  s.policy = orchestrator_policy(settings.adasplit.orchestrator);
  s.discount = settings.adasplit.discount;
  s.temperature = settings.adasplit.temperature;
  s.l1 = settings.adasplit.l1;
  s.embedding_dim = settings.adasplit.embedding_dim;
  s.head_channels = settings.adasplit.head_channels;
  return s;
}

}  // namespace cmlbed::train
