#include "cmlbed/model/weight_masks.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <stdexcept>

namespace cmlbed::model {

std::vector<MaskSlot> masked_slots(torch::nn::Module& module) {
  std::vector<MaskSlot> slots;
  auto member = [&](torch::Tensor& tensor) {
    slots.push_back({[&tensor] { return tensor; }, [&tensor](const torch::Tensor& value) { tensor = value; }});
  };
  auto add = [&](torch::Tensor& weight, torch::Tensor& bias) {
    member(weight);
    if (bias.defined()) member(bias);
  };
  // Conv2dImpl and LinearImpl read their `weight` and `bias` members in forward, so
  // replacing those members (not the registered parameters) masks the layer.
  auto visit = [&](torch::nn::Module& m) {
    if (auto* conv = dynamic_cast<torch::nn::Conv2dImpl*>(&m)) add(conv->weight, conv->bias);
    if (auto* linear = dynamic_cast<torch::nn::LinearImpl*>(&m)) add(linear->weight, linear->bias);
    if (auto* maskable = dynamic_cast<MaskableLayer*>(&m)) {
      for (MaskSlot& slot : maskable->mask_slots()) slots.push_back(std::move(slot));
    }
  };
  // modules(true) would need the module in a shared_ptr; the top one is visited apart.
  visit(module);
  for (const auto& child : module.modules(/*include_self=*/false)) visit(*child);
  return slots;
}

WeightMasks::WeightMasks(torch::nn::Module& module, std::uint64_t seed, double mean, double stddev) {
  auto generator = at::detail::createCPUGenerator(seed);
  for (const MaskSlot& slot : masked_slots(module)) {
    torch::Tensor mask = at::normal(mean, stddev, slot.read().sizes(), generator, torch::kFloat32);
    masks_.push_back(mask.set_requires_grad(true));
  }
}

std::int64_t WeightMasks::entries() const {
  std::int64_t count = 0;
  for (const auto& mask : masks_) count += mask.numel();
  return count;
}

torch::Tensor WeightMasks::l1() const {
  torch::Tensor sum = torch::zeros({});
  for (const auto& mask : masks_) sum = sum + torch::sigmoid(mask).sum();
  return sum;
}

double WeightMasks::sparsity() const {
  torch::NoGradGuard no_grad;
  std::int64_t off = 0;
  for (const auto& mask : masks_) off += mask.lt(0).sum().item<std::int64_t>();
  const std::int64_t total = entries();
  return total == 0 ? 0.0 : static_cast<double>(off) / static_cast<double>(total);
}

WeightMasks::Applied::Applied(const WeightMasks& masks, torch::nn::Module& module)
    : slots_(masked_slots(module)) {
  if (slots_.size() != masks.masks_.size()) {
    throw std::invalid_argument("WeightMasks: the module has " + std::to_string(slots_.size()) +
                                " maskable tensors, the masks " + std::to_string(masks.masks_.size()));
  }
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    originals_.push_back(slots_[i].read());
    slots_[i].write(originals_[i] * torch::sigmoid(masks.masks_[i]));
  }
}

WeightMasks::Applied::~Applied() {
  for (std::size_t i = 0; i < slots_.size(); ++i) slots_[i].write(originals_[i]);
}

}  // namespace cmlbed::model
