#pragma once
// Per-device masks over a model part's convolution and linear weights and biases
// (AdaSplit's masked server): while a mask set is applied, each such tensor W acts as
// W * sigmoid(M), so one set of weights W serves every device through its own M, and
// gradients reach both W and M. Other layers (batch norm, pooling) are used unmasked.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace cmlbed::model {

// One maskable tensor, read and replaced where the layer's forward reads it.
struct MaskSlot {
  std::function<torch::Tensor()> read;
  std::function<void(const torch::Tensor&)> write;
};

// A layer whose weights its forward does not read from Conv2dImpl/LinearImpl members (a
// TorchScript layer reads its module's attributes): it lists its own slots.
class MaskableLayer {
 public:
  virtual ~MaskableLayer() = default;
  // Its convolutions' and linear layers' weights and biases, in module tree order,
  // weight before bias.
  virtual std::vector<MaskSlot> mask_slots() = 0;
};

class WeightMasks {
 public:
  // One mask per conv/linear weight and bias of `module`, entries drawn from
  // N(mean, stddev^2) with a generator seeded by `seed`.
  WeightMasks(torch::nn::Module& module, std::uint64_t seed, double mean = 1.0, double stddev = 0.1);

  // The mask tensors (leaves that require gradients), for an optimizer.
  const std::vector<torch::Tensor>& tensors() const { return masks_; }
  std::int64_t entries() const;

  // sum over every entry of sigmoid(M): the L1 size of the effective mask.
  torch::Tensor l1() const;
  // Share of entries whose sigmoid is below 0.5 (M < 0): weights mostly switched off.
  double sparsity() const;

  // While alive, the module's masked tensors are W * sigmoid(M); the destructor puts
  // W back. Forward passes run inside it keep their graph to W and M for backward.
  class Applied {
   public:
    Applied(const WeightMasks& masks, torch::nn::Module& module);
    ~Applied();
    Applied(const Applied&) = delete;
    Applied& operator=(const Applied&) = delete;

   private:
    std::vector<MaskSlot> slots_;           // the module's weights and biases
    std::vector<torch::Tensor> originals_;  // W, restored on destruction
  };
  Applied apply(torch::nn::Module& module) const { return Applied(*this, module); }

 private:
  std::vector<torch::Tensor> masks_;  // in the order masked_slots() lists the tensors
};

// The weight and bias of every Conv2d and Linear module in `module` (and the slots of
// every MaskableLayer), in a fixed order (module tree order, weight before bias).
std::vector<MaskSlot> masked_slots(torch::nn::Module& module);

}  // namespace cmlbed::model
