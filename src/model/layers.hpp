#pragma once
// The building blocks of the zoo's networks. Each is one splittable Layer or a part
// of one; all compute through counted_ops so FLOPs are measured.
#include <torch/torch.h>

#include "cmlbed/model/split_model.hpp"
#include "counted_ops.hpp"

namespace cmlbed::model {

struct ConvSpec {
  std::int64_t in = 0, out = 0, kernel = 3, stride = 1, groups = 1;
  std::int64_t padding = -1;  // -1 = "same" for odd kernels: (kernel - 1) / 2
  bool batch_norm = true;     // with batch norm the convolution has no bias
  Activation activation = Activation::relu;
};

// Convolution, optional batch norm, optional activation.
class ConvBnAct : public Layer {
 public:
  explicit ConvBnAct(const ConvSpec& spec);
  torch::Tensor forward(const torch::Tensor& x) override;

 private:
  torch::nn::Conv2d conv_{nullptr};
  torch::nn::BatchNorm2d norm_{nullptr};
  Activation activation_;
};

// Max pooling with stride = kernel and ceil mode (so 7x7 -> 4x4, never to zero).
class MaxPool : public Layer {
 public:
  explicit MaxPool(std::int64_t kernel) : kernel_(kernel) {}
  torch::Tensor forward(const torch::Tensor& x) override { return counted::max_pool(x, kernel_); }

 private:
  std::int64_t kernel_;
};

// Global average pooling to one value per channel: N x C x H x W -> N x C.
class GlobalAvgPool : public Layer {
 public:
  torch::Tensor forward(const torch::Tensor& x) override { return counted::global_avg_pool(x); }
};

// Fully connected layer; flattens its input first. Dropout (if any) follows the
// activation, as in MobileNetV3's classifier, and draws its masks from the layer's own
// generator, seeded with `dropout_seed`: not from LibTorch's default generator, which
// every part in the process shares. Then each server replica (a part of its own) draws
// the same masks in the same order, whichever device's micro-batch arrives first.
class Dense : public Layer {
 public:
  Dense(std::int64_t in, std::int64_t out, Activation activation, double dropout = 0.0,
        std::uint64_t dropout_seed = 0);
  torch::Tensor forward(const torch::Tensor& x) override;

 private:
  torch::nn::Linear linear_{nullptr};
  Activation activation_;
  double dropout_;
  at::Generator dropout_generator_;
};

// ResNet basic block: two 3x3 convolutions with a (projected) shortcut.
class BasicBlock : public Layer {
 public:
  BasicBlock(std::int64_t in, std::int64_t out, std::int64_t stride);
  torch::Tensor forward(const torch::Tensor& x) override;

 private:
  std::shared_ptr<ConvBnAct> conv1_, conv2_, shortcut_;
};

// MobileNetV3 bottleneck: 1x1 expansion, depthwise kxk, optional squeeze-excitation,
// 1x1 projection, residual when shapes allow (torchvision's InvertedResidual).
struct BottleneckSpec {
  std::int64_t in, kernel, expanded, out;
  bool squeeze_excite;
  Activation activation;
  std::int64_t stride;
};

class Bottleneck : public Layer {
 public:
  explicit Bottleneck(const BottleneckSpec& spec);
  torch::Tensor forward(const torch::Tensor& x) override;

 private:
  std::shared_ptr<ConvBnAct> expand_, depthwise_, project_;
  torch::nn::Conv2d squeeze_{nullptr}, excite_{nullptr};
  bool residual_;
};

}  // namespace cmlbed::model
