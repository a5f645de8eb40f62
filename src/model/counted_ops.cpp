#include "counted_ops.hpp"

#include <stdexcept>

namespace cmlbed::model {
namespace {

thread_local FlopCounter* active_counter = nullptr;

void count(std::int64_t flops) {
  if (active_counter != nullptr) active_counter->add(flops);
}

}  // namespace

FlopCounter::FlopCounter() {
  if (active_counter != nullptr) throw std::logic_error("FlopCounter: already counting");
  active_counter = this;
}

FlopCounter::~FlopCounter() { active_counter = nullptr; }

FlopCounter* FlopCounter::active() { return active_counter; }

namespace counted {

torch::Tensor conv(torch::nn::Conv2d& conv, const torch::Tensor& x) {
  torch::Tensor y = conv->forward(x);
  const auto& o = conv->options;
  const std::int64_t macs_per_output =
      (o.in_channels() / o.groups()) * o.kernel_size()->at(0) * o.kernel_size()->at(1);
  count(2 * macs_per_output * y.numel() + (o.bias() ? y.numel() : 0));
  return y;
}

torch::Tensor linear(torch::nn::Linear& linear, const torch::Tensor& x) {
  torch::Tensor y = linear->forward(x);
  count(2 * linear->options.in_features() * y.numel() + (linear->options.bias() ? y.numel() : 0));
  return y;
}

torch::Tensor batch_norm(torch::nn::BatchNorm2d& norm, const torch::Tensor& x) {
  count(2 * x.numel());
  return norm->forward(x);
}

torch::Tensor activation(Activation kind, const torch::Tensor& x) {
  switch (kind) {
    case Activation::none: return x;
    case Activation::relu: count(x.numel()); return torch::relu(x);
    case Activation::hardswish: count(x.numel()); return torch::hardswish(x);
    case Activation::hardsigmoid: count(x.numel()); return torch::hardsigmoid(x);
  }
  throw std::logic_error("unknown activation");
}

torch::Tensor max_pool(const torch::Tensor& x, std::int64_t kernel) {
  count(x.numel());
  return torch::max_pool2d(x, {kernel, kernel}, {kernel, kernel}, {0, 0}, {1, 1},
                           /*ceil_mode=*/true);
}

torch::Tensor global_avg_pool(const torch::Tensor& x) {
  count(x.numel());
  return x.mean({2, 3});
}

torch::Tensor add(const torch::Tensor& a, const torch::Tensor& b) {
  torch::Tensor y = a + b;
  count(y.numel());
  return y;
}

torch::Tensor multiply(const torch::Tensor& a, const torch::Tensor& b) {
  torch::Tensor y = a * b;
  count(y.numel());
  return y;
}

}  // namespace counted
}  // namespace cmlbed::model
