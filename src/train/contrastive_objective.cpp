#include "cmlbed/train/contrastive_objective.hpp"

#include <limits>
#include <numeric>
#include <stdexcept>

#include "cmlbed/base/seed_streams.hpp"

namespace cmlbed::train {

torch::Tensor supervised_nt_xent(const torch::Tensor& embeddings, const torch::Tensor& labels,
                                 double temperature) {
  if (embeddings.dim() != 2 || labels.dim() != 1 || embeddings.size(0) != labels.size(0)) {
    throw std::invalid_argument("supervised_nt_xent: needs N x E embeddings and N labels");
  }
  const std::int64_t n = embeddings.size(0);
  const torch::Tensor z = torch::nn::functional::normalize(
      embeddings, torch::nn::functional::NormalizeFuncOptions().p(2).dim(1));
  const torch::Tensor self = torch::eye(n).to(torch::kBool);
  // The anchor itself is out of the denominator: -inf before the log-softmax.
  const torch::Tensor similarity =
      (z.matmul(z.t()) / temperature).masked_fill(self, -std::numeric_limits<double>::infinity());
  const torch::Tensor log_probability = torch::log_softmax(similarity, 1);
  const torch::Tensor positive = labels.unsqueeze(0).eq(labels.unsqueeze(1)).logical_and(self.logical_not());
  const torch::Tensor positives = positive.sum(1);
  // where(), not a product: the diagonal's -inf times 0 would be NaN.
  const torch::Tensor summed = torch::where(positive, log_probability, torch::zeros_like(log_probability)).sum(1);
  const torch::Tensor has_positive = positives.gt(0);
  if (!has_positive.any().item<bool>()) return (embeddings * 0).sum();
  const torch::Tensor per_anchor = -summed.index({has_positive}) / positives.index({has_positive}).to(summed.dtype());
  return per_anchor.mean();
}

double nt_xent_forward_flops(std::int64_t samples, std::int64_t dim) {
  const auto n = static_cast<double>(samples);
  const auto e = static_cast<double>(dim);
  return 3 * n * e + 2 * n * n * e + 5 * n * n;
}

ProjectionHead::ProjectionHead(const std::vector<std::int64_t>& shape, std::int64_t hidden,
                               std::int64_t embedding_dim, std::uint64_t seed) {
  if (shape.empty()) throw std::invalid_argument("projection head: empty activation shape");
  // Weights drawn from their own stream, right here, so the head does not shift the
  // model's draws.
  torch::manual_seed(stream_seed(seed, "adasplit_head"));
  const std::int64_t in = shape[0];
  image_ = shape.size() == 3;
  if (image_) {
    const double pixels = static_cast<double>(shape[1] * shape[2]);
    project_ = register_module("project", torch::nn::Conv2d(torch::nn::Conv2dOptions(in, hidden, 1)));
    // 1x1 convolution with bias, leaky ReLU, max pool: per output pixel and channel.
    forward_flops_ = pixels * static_cast<double>(hidden) * (2.0 * static_cast<double>(in) + 1 + 1 + 1);
  } else {
    const std::int64_t features =
        std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
    hidden_ = register_module("hidden", torch::nn::Linear(features, hidden));
    forward_flops_ = static_cast<double>(hidden) * (2.0 * static_cast<double>(features) + 1 + 1);
  }
  out_ = register_module("out", torch::nn::Linear(hidden, embedding_dim));
  forward_flops_ += static_cast<double>(embedding_dim) * (2.0 * static_cast<double>(hidden) + 1);
}

torch::Tensor ProjectionHead::forward(const torch::Tensor& activation) {
  torch::Tensor x;
  if (image_) {
    x = torch::leaky_relu(project_->forward(activation));
    x = std::get<0>(x.flatten(2).max(2));  // global max pool: N x hidden
  } else {
    x = torch::leaky_relu(hidden_->forward(activation.flatten(1)));
  }
  return out_->forward(x);
}

std::int64_t ProjectionHead::parameter_count() const {
  std::int64_t count = 0;
  for (const auto& p : parameters(true)) count += p.numel();
  return count;
}

}  // namespace cmlbed::train
