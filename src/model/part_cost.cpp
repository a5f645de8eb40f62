#include "cmlbed/model/part_cost.hpp"

#include <stdexcept>
#include <string>

namespace cmlbed::model {

PartCost part_cost(const std::vector<LayerStats>& layers, std::size_t first, std::size_t last,
                   bool input_needs_gradient) {
  if (first > last || last > layers.size()) {
    throw std::out_of_range("part_cost: layers [" + std::to_string(first) + ", " + std::to_string(last) +
                            ") of a network of " + std::to_string(layers.size()));
  }
  PartCost cost;
  bool needs_gradient = input_needs_gradient;
  for (std::size_t i = first; i < last; ++i) {
    const LayerStats& layer = layers[i];
    const auto forward = static_cast<double>(layer.flops_per_sample);
    const bool has_parameters = layer.parameters > 0;
    cost.forward_per_sample += forward;
    if (has_parameters) cost.backward_per_sample += forward;  // weight gradients
    if (needs_gradient) cost.backward_per_sample += forward;  // input gradient
    cost.parameters += layer.parameters;
    cost.state_values += layer.parameters + layer.buffer_values;
    needs_gradient = needs_gradient || has_parameters;
  }
  return cost;
}

}  // namespace cmlbed::model
