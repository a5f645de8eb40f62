// Training FLOPs of model parts: LeNet-5 by hand, and the identity the methods rely on
// (a split device part plus its server part trains with the whole model's FLOPs).
#include <gtest/gtest.h>

#include "cmlbed/model/part_cost.hpp"

namespace cmlbed::model {
namespace {

// LeNet-5 on 1x32x32, 10 classes, per sample (docs/reference/model-zoo.md's convention).
constexpr double kConv1 = 2.0 * 25 * 6 * 28 * 28 + 6 * 28 * 28 + 6 * 28 * 28;    // + bias, ReLU
constexpr double kPool1 = 6 * 28 * 28;                                             // reads
constexpr double kConv2 = 2.0 * 150 * 16 * 10 * 10 + 16 * 10 * 10 + 16 * 10 * 10;
constexpr double kPool2 = 16 * 10 * 10;
constexpr double kFc1 = 2.0 * 400 * 120 + 120 + 120;
constexpr double kFc2 = 2.0 * 120 * 84 + 84 + 84;
constexpr double kFc3 = 2.0 * 84 * 10 + 10;

TEST(PartCost, LeNetByHand) {
  const auto layers = layer_stats({"lenet", {1, 32, 32}, 10});
  ASSERT_EQ(layers.size(), 7u);
  const PartCost whole = part_cost(layers, 0, 7, false);
  EXPECT_DOUBLE_EQ(whole.forward_per_sample, kConv1 + kPool1 + kConv2 + kPool2 + kFc1 + kFc2 + kFc3);
  // conv1: weight gradients only (the images need no gradient); every later layer its
  // input gradient, and the ones with weights their weight gradients too.
  EXPECT_DOUBLE_EQ(whole.backward_per_sample,
                   kConv1 + kPool1 + 2 * kConv2 + kPool2 + 2 * kFc1 + 2 * kFc2 + 2 * kFc3);
  EXPECT_EQ(whole.parameters, 61706);

  // Split after pool1: the server part returns its input's gradient.
  const PartCost device = part_cost(layers, 0, 2, false);
  const PartCost server = part_cost(layers, 2, 7, true);
  EXPECT_DOUBLE_EQ(device.backward_per_sample, kConv1 + kPool1);
  EXPECT_DOUBLE_EQ(server.backward_per_sample, 2 * kConv2 + kPool2 + 2 * kFc1 + 2 * kFc2 + 2 * kFc3);
  EXPECT_EQ(device.parameters, 6 * 25 + 6);
}

TEST(PartCost, ParameterFreeLayersBeforeTheFirstWeightsCostNothingBackward) {
  const auto layers = layer_stats({"lenet", {1, 32, 32}, 10});
  // pool1 alone, fed with something that needs no gradient: autograd runs nothing.
  EXPECT_DOUBLE_EQ(part_cost(layers, 1, 2, false).backward_per_sample, 0.0);
  EXPECT_DOUBLE_EQ(part_cost(layers, 1, 2, true).backward_per_sample, kPool1);
  EXPECT_DOUBLE_EQ(part_cost(layers, 3, 3, true).forward_per_sample, 0.0);
  EXPECT_THROW(part_cost(layers, 3, 8, true), std::out_of_range);
  EXPECT_THROW(part_cost(layers, 4, 3, true), std::out_of_range);
}

TEST(PartCost, DevicePlusServerEqualsTheWholeModelAtEverySplit) {
  for (const std::string& name : model_names()) {
    const auto layers = layer_stats({name, {3, 32, 32}, 10});
    const PartCost whole = part_cost(layers, 0, layers.size(), false);
    for (std::size_t split = 1; split < layers.size(); ++split) {
      const PartCost device = part_cost(layers, 0, split, false);
      const PartCost server = part_cost(layers, split, layers.size(), true);
      EXPECT_DOUBLE_EQ(device.forward_per_sample + server.forward_per_sample, whole.forward_per_sample)
          << name << " split " << split;
      EXPECT_DOUBLE_EQ(device.backward_per_sample + server.backward_per_sample, whole.backward_per_sample)
          << name << " split " << split;
      EXPECT_EQ(device.parameters + server.parameters, whole.parameters);
    }
  }
}

}  // namespace
}  // namespace cmlbed::model
