#pragma once
// FLOPs of training a model part, per sample, from the zoo's per-layer forward counts
// (docs/reference/model-zoo.md: a multiply-add = 2 FLOPs). Backward follows the same rule at layer
// granularity, counting what autograd actually runs:
//  - a layer with parameters computes its weight gradients, which cost what its forward
//    did (for convolutions and linear layers exactly: every multiply-add of the forward
//    has one in the weight gradient);
//  - a layer computes its input gradient, again as much as its forward, only when its
//    input needs one: the part's input does (a server part returns the activation's
//    gradient), or some earlier layer of the part has parameters. So layer 0 of the
//    whole network (its input is the images) and parameter-free layers before the first
//    parameterised one cost nothing backward.
// Hence FL's whole-model count equals a split device part plus its server part, for any
// split point P >= 1.
#include <cstdint>
#include <vector>

#include "cmlbed/model/zoo.hpp"

namespace cmlbed::model {

struct PartCost {
  double forward_per_sample = 0;
  double backward_per_sample = 0;
  std::int64_t parameters = 0;
  // Parameters and buffers: the float32 values a message of the part's model carries
  // (train::flat_state).
  std::int64_t state_values = 0;
};

// Layers [first, last) of `layers`; throws std::out_of_range for a range beyond them.
PartCost part_cost(const std::vector<LayerStats>& layers, std::size_t first, std::size_t last,
                   bool input_needs_gradient);

}  // namespace cmlbed::model
