#pragma once
// Tensor operations that also count their FLOPs when a FlopCounter is active on this
// thread. Layers call these instead of the plain modules so that FLOPs are measured
// from the shapes that really flow, residual and squeeze-excitation branches included.
//
// Convention (docs/reference/model-zoo.md): a multiply-add is 2 FLOPs; a bias add, a batch-norm
// (scale and shift, inference form) 2 per element, an activation 1 per element, a pool
// one per input element it reads, an element-wise add or multiply 1 per element.
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cmlbed::model {

enum class Activation { none, relu, hardswish, hardsigmoid };

// RAII: while alive, counted ops on this thread add to total(). Not nestable.
class FlopCounter {
 public:
  FlopCounter();
  ~FlopCounter();
  FlopCounter(const FlopCounter&) = delete;
  FlopCounter& operator=(const FlopCounter&) = delete;
  std::int64_t total() const { return total_; }
  void add(std::int64_t flops) { total_ += flops; }
  // A part whose FLOPs cannot be counted (a TorchScript module of unknown type).
  void skip(std::string what) { skipped_.push_back(std::move(what)); }
  const std::vector<std::string>& skipped() const { return skipped_; }

  // The counter alive on this thread, or nullptr.
  static FlopCounter* active();

 private:
  std::int64_t total_ = 0;
  std::vector<std::string> skipped_;
};

namespace counted {
torch::Tensor conv(torch::nn::Conv2d& conv, const torch::Tensor& x);
torch::Tensor linear(torch::nn::Linear& linear, const torch::Tensor& x);
torch::Tensor batch_norm(torch::nn::BatchNorm2d& norm, const torch::Tensor& x);
torch::Tensor activation(Activation kind, const torch::Tensor& x);
torch::Tensor max_pool(const torch::Tensor& x, std::int64_t kernel);  // stride = kernel, ceil mode
torch::Tensor global_avg_pool(const torch::Tensor& x);                // N x C x H x W -> N x C
torch::Tensor add(const torch::Tensor& a, const torch::Tensor& b);
torch::Tensor multiply(const torch::Tensor& a, const torch::Tensor& b);  // broadcasting
}  // namespace counted

}  // namespace cmlbed::model
