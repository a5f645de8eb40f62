#include "layers.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <stdexcept>

namespace cmlbed::model {
namespace {

// torchvision's _make_divisible: round channels to a multiple of 8, never down by >10%.
std::int64_t make_divisible(double value, std::int64_t divisor = 8) {
  std::int64_t rounded = std::max<std::int64_t>(
      divisor, static_cast<std::int64_t>(value + divisor / 2.0) / divisor * divisor);
  if (rounded < 0.9 * value) rounded += divisor;
  return rounded;
}

}  // namespace

ConvBnAct::ConvBnAct(const ConvSpec& spec) : activation_(spec.activation) {
  const std::int64_t padding = spec.padding >= 0 ? spec.padding : (spec.kernel - 1) / 2;
  conv_ = register_module(
      "conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(spec.in, spec.out, spec.kernel)
                                    .stride(spec.stride)
                                    .padding(padding)
                                    .groups(spec.groups)
                                    .bias(!spec.batch_norm)));
  if (spec.batch_norm) norm_ = register_module("norm", torch::nn::BatchNorm2d(spec.out));
}

torch::Tensor ConvBnAct::forward(const torch::Tensor& x) {
  torch::Tensor y = counted::conv(conv_, x);
  if (norm_) y = counted::batch_norm(norm_, y);
  return counted::activation(activation_, y);
}

Dense::Dense(std::int64_t in, std::int64_t out, Activation activation, double dropout,
             std::uint64_t dropout_seed)
    : activation_(activation), dropout_(dropout), dropout_generator_(at::detail::createCPUGenerator(dropout_seed)) {
  if (dropout < 0 || dropout >= 1) throw std::invalid_argument("dense layer: dropout must be in [0, 1)");
  linear_ = register_module("linear", torch::nn::Linear(in, out));
}

torch::Tensor Dense::forward(const torch::Tensor& x) {
  torch::Tensor y = counted::linear(linear_, x.flatten(1));
  y = counted::activation(activation_, y);
  if (dropout_ > 0 && is_training()) {
    // Inverted dropout, as torch::dropout: keep with probability 1 - p, scale by 1 / (1 - p).
    const torch::Tensor keep = torch::bernoulli(torch::full_like(y, 1 - dropout_), dropout_generator_);
    y = y * keep / (1 - dropout_);
  }
  return y;
}

BasicBlock::BasicBlock(std::int64_t in, std::int64_t out, std::int64_t stride) {
  conv1_ = register_module("conv1", std::make_shared<ConvBnAct>(
                                        ConvSpec{in, out, 3, stride, 1, -1, true, Activation::relu}));
  conv2_ = register_module("conv2", std::make_shared<ConvBnAct>(
                                        ConvSpec{out, out, 3, 1, 1, -1, true, Activation::none}));
  if (stride != 1 || in != out) {
    shortcut_ = register_module(
        "shortcut",
        std::make_shared<ConvBnAct>(ConvSpec{in, out, 1, stride, 1, 0, true, Activation::none}));
  }
}

torch::Tensor BasicBlock::forward(const torch::Tensor& x) {
  const torch::Tensor identity = shortcut_ ? shortcut_->forward(x) : x;
  return counted::activation(Activation::relu,
                             counted::add(conv2_->forward(conv1_->forward(x)), identity));
}

Bottleneck::Bottleneck(const BottleneckSpec& spec)
    : residual_(spec.stride == 1 && spec.in == spec.out) {
  if (spec.expanded != spec.in) {
    expand_ = register_module("expand", std::make_shared<ConvBnAct>(ConvSpec{
                                            spec.in, spec.expanded, 1, 1, 1, 0, true,
                                            spec.activation}));
  }
  depthwise_ = register_module(
      "depthwise", std::make_shared<ConvBnAct>(ConvSpec{spec.expanded, spec.expanded, spec.kernel,
                                                        spec.stride, spec.expanded, -1, true,
                                                        spec.activation}));
  if (spec.squeeze_excite) {
    const std::int64_t squeezed = make_divisible(static_cast<double>(spec.expanded / 4));
    squeeze_ = register_module("squeeze", torch::nn::Conv2d(torch::nn::Conv2dOptions(
                                              spec.expanded, squeezed, 1)));
    excite_ = register_module("excite", torch::nn::Conv2d(torch::nn::Conv2dOptions(
                                            squeezed, spec.expanded, 1)));
  }
  project_ = register_module("project", std::make_shared<ConvBnAct>(ConvSpec{
                                            spec.expanded, spec.out, 1, 1, 1, 0, true,
                                            Activation::none}));
}

torch::Tensor Bottleneck::forward(const torch::Tensor& x) {
  torch::Tensor y = expand_ ? expand_->forward(x) : x;
  y = depthwise_->forward(y);
  if (squeeze_) {
    torch::Tensor scale = counted::global_avg_pool(y).unsqueeze(-1).unsqueeze(-1);
    scale = counted::activation(Activation::relu, counted::conv(squeeze_, scale));
    scale = counted::activation(Activation::hardsigmoid, counted::conv(excite_, scale));
    y = counted::multiply(y, scale);
  }
  y = project_->forward(y);
  return residual_ ? counted::add(y, x) : y;
}

}  // namespace cmlbed::model
