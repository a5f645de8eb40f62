#pragma once
// AdaSplit's device-side objective: a small projection head on the device part's output
// and a supervised contrastive loss on its embeddings, so a device trains without any
// gradient from the server.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace cmlbed::train {

// Supervised NT-Xent (SupCon, Khosla et al. 2020, "L_out"), as AdaSplit's devices use it:
// z = embeddings scaled to unit L2 norm, s_ij = z_i . z_j / temperature; for an anchor i
// with positives P(i) = {j != i : label_j = label_i},
//   loss_i = -(1/|P(i)|) sum_{p in P(i)} log( exp(s_ip) / sum_{k != i} exp(s_ik) ),
// and the loss is the mean of loss_i over the anchors that have a positive (0, with a
// gradient of zeros, when none has). embeddings: N x E, labels: N (int64).
torch::Tensor supervised_nt_xent(const torch::Tensor& embeddings, const torch::Tensor& labels,
                                 double temperature);

// FLOPs of one supervised_nt_xent forward over `samples` embeddings of size `dim`:
// normalising (3 per element), the similarity matrix (2 x dim per pair) and the
// softmax terms (about 5 per pair). Its backward is counted as twice that.
double nt_xent_forward_flops(std::int64_t samples, std::int64_t dim);

// The authors' projection head: for an activation of shape C x H x W, a 1x1
// convolution to `hidden` channels, leaky ReLU, global max pooling, a linear layer to
// `embedding_dim`; for a flat activation of size F, linear F -> hidden, leaky ReLU,
// linear hidden -> embedding_dim. Weights from `seed`.
class ProjectionHead : public torch::nn::Module {
 public:
  ProjectionHead(const std::vector<std::int64_t>& activation_shape, std::int64_t hidden,
                 std::int64_t embedding_dim, std::uint64_t seed);
  torch::Tensor forward(const torch::Tensor& activation);

  // Per sample: forward FLOPs (multiply-add = 2), and the head's parameters.
  double forward_flops_per_sample() const { return forward_flops_; }
  std::int64_t parameter_count() const;

 private:
  bool image_ = false;  // C x H x W activation (else flat)
  torch::nn::Conv2d project_{nullptr};
  torch::nn::Linear hidden_{nullptr};
  torch::nn::Linear out_{nullptr};
  double forward_flops_ = 0;
};

}  // namespace cmlbed::train
