#include "cmlbed/train/tensor_codec.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace {

using cmlbed::net::Message;

Message encode(const torch::Tensor& tensor) {
  Message message;
  message.payload = cmlbed::train::tensor_payload(tensor, message.header);
  return message;
}

TEST(TensorCodec, RoundTripKeepsShapeAndValues) {
  const torch::Tensor t = torch::arange(12, torch::kFloat32).reshape({3, 4});
  const torch::Tensor back = cmlbed::train::tensor_from(encode(t));
  EXPECT_EQ(back.sizes(), t.sizes());
  EXPECT_TRUE(torch::equal(back, t));
}

// A device part without parameters (split 0) sends an empty state: its data pointer is
// null, and copying it was undefined behaviour (UBSan: "null pointer passed as argument
// 1" in the simulate_job test's auto run, which had picked split 0).
TEST(TensorCodec, EmptyStateOfAPartWithoutParameters) {
  torch::nn::Sequential empty_part;
  const torch::Tensor state = cmlbed::train::flat_state(*empty_part);
  EXPECT_EQ(state.numel(), 0);
  const Message message = encode(state);
  EXPECT_TRUE(message.payload.empty());
  const torch::Tensor back = cmlbed::train::tensor_from(message);
  EXPECT_EQ(back.numel(), 0);
  cmlbed::train::load_flat_state(*empty_part, back);
}

// DP-FedAvg clips and noises the parameters only: they must be the state's leading
// entries, the batch norm's running statistics and counter after them.
TEST(TensorCodec, ParametersLeadTheFlatState) {
  torch::nn::Sequential part(torch::nn::Linear(3, 2), torch::nn::BatchNorm1d(2));
  EXPECT_EQ(cmlbed::train::parameter_entries(*part), 3 * 2 + 2 + 2 + 2);
  const torch::Tensor state = cmlbed::train::flat_state(*part);
  ASSERT_EQ(state.numel(), 12 + 2 + 2 + 1);
  EXPECT_TRUE(torch::equal(state.slice(0, 12, 14), torch::zeros({2})));  // running mean
  EXPECT_TRUE(torch::equal(state.slice(0, 14, 16), torch::ones({2})));   // running variance
}

TEST(TensorCodec, ActivationWithoutSamples) {
  const torch::Tensor activation = torch::empty({0, 8});
  const torch::Tensor labels = torch::empty({0}, torch::kInt64);
  Message message;
  message.payload = cmlbed::train::activation_payload(activation, labels, message.header);
  const auto [a, y] = cmlbed::train::activation_from(message);
  EXPECT_EQ(a.sizes(), activation.sizes());
  EXPECT_EQ(y.numel(), 0);
}

}  // namespace
