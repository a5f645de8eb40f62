#pragma once
// A network split between device and server: ModelPart(first, last) holds layers
// [first, last) of a zoo network. The device builds [0, P), the server [P, L); both
// from the same seed, so (device part then server part) computes exactly the whole
// model. Each layer's weights are drawn from a seed derived from (seed, layer index),
// so a part does not depend on which other parts exist.
#include <torch/torch.h>

#include <memory>
#include <vector>

#include "cmlbed/model/zoo.hpp"

namespace cmlbed::model {

// One splittable layer: a module with a single tensor in and out.
class Layer : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(const torch::Tensor& input) = 0;
};

struct NamedLayer {
  std::string name;  // "conv1", "pool1", "block3", "fc2", ...
  std::shared_ptr<Layer> layer;
};

// All layers of a network, initialised from `seed`. Throws std::invalid_argument for
// an unknown name or an input the network cannot take.
std::vector<NamedLayer> build_layers(const ModelOptions& options, std::uint64_t seed);


class ModelPart : public torch::nn::Module {
 public:
  // Layers [first, last); first == last is an empty part (identity), as the server of
  // plain FL (P = L) or the device of P = 0.
  ModelPart(const ModelOptions& options, std::size_t first, std::size_t last, std::uint64_t seed);

  torch::Tensor forward(torch::Tensor input);

  std::size_t first() const { return first_; }
  std::size_t last() const { return last_; }
  std::size_t size() const { return layers_.size(); }

 private:
  std::size_t first_;
  std::size_t last_;
  std::vector<std::shared_ptr<Layer>> layers_;
};

}  // namespace cmlbed::model
