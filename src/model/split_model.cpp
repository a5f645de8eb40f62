#include "cmlbed/model/split_model.hpp"

#include <stdexcept>

namespace cmlbed::model {

ModelPart::ModelPart(const ModelOptions& options, std::size_t first, std::size_t last,
                     std::uint64_t seed)
    : first_(first), last_(last) {
  std::vector<NamedLayer> all = build_layers(options, seed);
  if (first > last || last > all.size()) {
    throw std::invalid_argument("model '" + options.name + "' has " + std::to_string(all.size()) +
                                " layers; cannot take part [" + std::to_string(first) + ", " +
                                std::to_string(last) + ")");
  }
  for (std::size_t i = first; i < last; ++i) {
    // Registered under the global index, so parameter names agree between the whole
    // model and its parts ("3.conv.weight"), which aggregation and tests rely on.
    layers_.push_back(register_module(std::to_string(i), all[i].layer));
  }
}

torch::Tensor ModelPart::forward(torch::Tensor input) {
  for (auto& layer : layers_) input = layer->forward(input);
  return input;
}

}  // namespace cmlbed::model
