// The model zoo: every network at every split point, the FLOP and byte counts, and the
// parameter counts of the reference architectures.
#include <gtest/gtest.h>

#include <functional>
#include <numeric>

#include "cmlbed/model/split_model.hpp"
#include "cmlbed/model/zoo.hpp"

namespace cmlbed::model {
namespace {

const ImageShape kGray{1, 28, 28};
const ImageShape kColour{3, 32, 32};

std::int64_t total_parameters(const ModelOptions& options) {
  std::int64_t total = 0;
  for (const LayerStats& s : layer_stats(options)) total += s.parameters;
  return total;
}

// Device part [0,P) and server part [P,L) built separately from the same seed compute
// exactly what the whole model computes, at every split point, and hold the same weights.
class SplitEqualsWhole : public ::testing::TestWithParam<std::tuple<std::string, ImageShape>> {};

TEST_P(SplitEqualsWhole, AtEverySplitPoint) {
  const ModelOptions options{std::get<0>(GetParam()), std::get<1>(GetParam()), 10};
  const std::size_t layers = layer_count(options);
  ModelPart whole(options, 0, layers, 42);
  const torch::Tensor input = torch::randn({3, options.input.channels, options.input.height,
                                            options.input.width},
                                           torch::TensorOptions().dtype(torch::kFloat32));
  torch::NoGradGuard no_grad;
  whole.eval();
  const torch::Tensor expected = whole.forward(input);
  ASSERT_EQ(expected.sizes(), (std::vector<std::int64_t>{3, 10}));
  const auto whole_parameters = whole.named_parameters();

  for (std::size_t split = 0; split <= layers; ++split) {
    SCOPED_TRACE("split " + std::to_string(split));
    ModelPart device(options, 0, split, 42);
    ModelPart server(options, split, layers, 42);
    device.eval();
    server.eval();
    EXPECT_TRUE(torch::equal(server.forward(device.forward(input)), expected));
    for (ModelPart* part : {&device, &server}) {
      for (const auto& p : part->named_parameters()) {
        ASSERT_NE(whole_parameters.find(p.key()), nullptr) << p.key();
        EXPECT_TRUE(torch::equal(p.value(), whole_parameters[p.key()])) << p.key();
      }
    }
    EXPECT_EQ(device.parameters().size() + server.parameters().size(), whole.parameters().size());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Zoo, SplitEqualsWhole,
    ::testing::Combine(::testing::ValuesIn(model_names()), ::testing::Values(kGray, kColour)),
    [](const auto& param_info) {
      std::string name = std::get<0>(param_info.param) + "_" + std::get<1>(param_info.param).to_string();
      for (char& c : name) {
        if (c == '-') c = '_';
      }
      return name;
    });

TEST(ModelZoo, TrainingModeSplitAlsoEqualsWhole) {
  // Batch norm uses batch statistics in training mode; still one computation.
  const ModelOptions options{"resnet18", kColour, 10};
  ModelPart whole(options, 0, 11, 7), device(options, 0, 4, 7), server(options, 4, 11, 7);
  const torch::Tensor input = torch::randn({4, 3, 32, 32});
  EXPECT_TRUE(torch::equal(server.forward(device.forward(input)), whole.forward(input)));
}

// MobileNetV3's classifier drops out in training. Two server parts built from one seed
// (two replicas) draw the same masks whatever else draws from LibTorch's default
// generator in between (another replica's forward, in arrival order).
TEST(ModelZoo, DropoutMasksComeFromTheLayerAndTheSeed) {
  const ModelOptions options{"mobilenetv3-small", kColour, 10};
  const std::size_t layers = layer_count(options);
  const std::size_t split = layers - 2;
  ModelPart device(options, 0, split, 5), first(options, split, layers, 5), second(options, split, layers, 5);
  device.eval();  // the activations in front of the classifier, the same for every forward
  const torch::Tensor input = torch::randn({8, 3, 32, 32});
  torch::NoGradGuard no_grad;
  const torch::Tensor activation = device.forward(input);
  const torch::Tensor a = first.forward(activation);
  torch::manual_seed(123);
  torch::rand({1000});  // draws from the default generator must not matter
  const torch::Tensor b = second.forward(activation);
  EXPECT_TRUE(torch::equal(a, b));
  EXPECT_FALSE(torch::equal(first.forward(activation), a)) << "the second forward drew the same masks";
  first.eval();
  const torch::Tensor kept = first.forward(activation);
  EXPECT_FALSE(torch::equal(kept, a)) << "no dropout in training";
}

TEST(ModelZoo, SeedDecidesTheWeights) {
  const ModelOptions options{"vgg5", kGray, 10};
  ModelPart a(options, 0, 7, 1), b(options, 0, 7, 1), c(options, 0, 7, 2);
  const auto pa = a.parameters(), pb = b.parameters(), pc = c.parameters();
  ASSERT_EQ(pa.size(), pc.size());
  for (std::size_t i = 0; i < pa.size(); ++i) {
    EXPECT_TRUE(torch::equal(pa[i], pb[i]));
    // Batch-norm scales and biases start as ones and zeros whatever the seed.
    if (pa[i].dim() > 1) {
      EXPECT_FALSE(torch::equal(pa[i], pc[i]));
    }
  }
}

TEST(ModelZoo, LayerCounts) {
  EXPECT_EQ(layer_count({"vgg5", kColour, 10}), 7u);
  EXPECT_EQ(layer_count({"vgg11", kColour, 10}), 16u);   // 8 conv + 5 pool + 3 dense
  EXPECT_EQ(layer_count({"vgg16", kColour, 10}), 21u);   // 13 conv + 5 pool + 3 dense
  EXPECT_EQ(layer_count({"resnet18", kColour, 10}), 11u);  // stem, 8 blocks, pool, fc
  EXPECT_EQ(layer_count({"mobilenetv3-small", kColour, 10}), 16u);
  EXPECT_EQ(layer_count({"mobilenetv3-large", kColour, 10}), 20u);
  EXPECT_EQ(layer_count({"lenet", kGray, 10}), 7u);
}

TEST(ModelZoo, ParameterCountsMatchReferenceArchitectures) {
  // CIFAR ResNet-18 with 10 classes: the widely quoted 11,173,962.
  EXPECT_EQ(total_parameters({"resnet18", kColour, 10}), 11173962);
  // torchvision's MobileNetV3 has 2,542,856 (small) and 5,483,032 (large) parameters
  // with 1000 classes; our classifiers differ only in the number of classes.
  EXPECT_EQ(total_parameters({"mobilenetv3-small", kColour, 1000}), 2542856);
  EXPECT_EQ(total_parameters({"mobilenetv3-large", kColour, 1000}), 5483032);
  // LeNet-5 on 32x32: 61,706 (the textbook figure).
  EXPECT_EQ(total_parameters({"lenet", {1, 32, 32}, 10}), 61706);
}

TEST(ModelZoo, Vgg5CountsByHand) {
  const auto stats = layer_stats({"vgg5", kGray, 10});
  ASSERT_EQ(stats.size(), 7u);
  // conv1: 3x3, 1 -> 32 channels on 28x28 with batch norm and no bias.
  EXPECT_EQ(stats[0].name, "conv1");
  EXPECT_EQ(stats[0].parameters, 32 * 9 + 2 * 32);
  EXPECT_EQ(stats[0].flops_per_sample,
            2 * 9 * 32 * 28 * 28      // multiply-adds
                + 2 * 32 * 28 * 28    // batch norm scale and shift
                + 32 * 28 * 28);      // ReLU
  EXPECT_EQ(stats[0].activation_bytes_per_sample, 32 * 28 * 28 * 4);
  EXPECT_EQ(stats[0].output_shape, (std::vector<std::int64_t>{32, 28, 28}));
  // pool1 reads every input element once and halves each side.
  EXPECT_EQ(stats[1].flops_per_sample, 32 * 28 * 28);
  EXPECT_EQ(stats[1].parameters, 0);
  EXPECT_EQ(stats[1].activation_bytes_per_sample, 32 * 14 * 14 * 4);
  // fc1: 64x7x7 = 3136 -> 128 with bias and ReLU.
  EXPECT_EQ(stats[5].parameters, 3136 * 128 + 128);
  EXPECT_EQ(stats[5].flops_per_sample, 2 * 3136 * 128 + 128 + 128);
  // fc2: 128 -> 10 logits.
  EXPECT_EQ(stats[6].flops_per_sample, 2 * 128 * 10 + 10);
  EXPECT_EQ(stats[6].activation_bytes_per_sample, 40);
  // What AdaSplit's masks cover: conv1's weight (its batch norm's scale and shift are
  // not masked), none of pool1's, all of fc1's.
  EXPECT_EQ(stats[0].maskable_values, 32 * 9);
  EXPECT_EQ(stats[1].maskable_values, 0);
  EXPECT_EQ(stats[5].maskable_values, stats[5].parameters);
}

TEST(ModelZoo, LeNetConvolutionByHand) {
  const auto stats = layer_stats({"lenet", kGray, 10});
  // conv1: 5x5, 1 -> 6 channels, no padding: 24x24 outputs, with bias and ReLU.
  EXPECT_EQ(stats[0].parameters, 6 * 25 + 6);
  EXPECT_EQ(stats[0].flops_per_sample, 2 * 25 * 6 * 24 * 24 + 6 * 24 * 24 + 6 * 24 * 24);
  EXPECT_EQ(stats[3].output_shape, (std::vector<std::int64_t>{16, 4, 4}));
}

TEST(ModelZoo, MobileNetDepthwiseCountsOneInputChannelPerOutput) {
  // bneck1 of MobileNetV3-Small on 3x32x32 sees 16x16x16 and has no expansion: a 3x3
  // depthwise convolution with stride 2 (to 8x8), squeeze-excitation 16 -> 8 -> 16,
  // then a 1x1 projection 16 -> 16.
  const auto stats = layer_stats({"mobilenetv3-small", kColour, 10});
  const std::int64_t depthwise = 2 * 9 * 16 * 8 * 8 + 2 * 16 * 64 + 16 * 64;
  const std::int64_t squeeze = 16 * 64 + (2 * 16 * 8 + 8) + 8 + (2 * 8 * 16 + 16) + 16 + 16 * 64;
  const std::int64_t project = 2 * 16 * 16 * 64 + 2 * 16 * 64;
  EXPECT_EQ(stats[1].name, "bneck1");
  EXPECT_EQ(stats[1].flops_per_sample, depthwise + squeeze + project);
}

TEST(ModelZoo, KnowsWhichLayersCannotTrainOnOneSample) {
  // MobileNetV3's squeeze-and-excitation normalises 1x1 maps; VGG-5's batch norm does not.
  const auto mobilenet = layer_stats({"mobilenetv3-small", kColour, 10});
  EXPECT_EQ(min_training_batch(mobilenet), 2);
  EXPECT_EQ(mobilenet.front().min_training_batch, 1);  // the stem: 16x16 maps
  EXPECT_EQ(min_training_batch(layer_stats({"vgg5", kColour, 10})), 1);
  EXPECT_EQ(min_training_batch(layer_stats({"resnet18", kColour, 10})), 1);
}

TEST(ModelZoo, RejectsUnknownModelAndTooSmallInput) {
  EXPECT_THROW(layer_count({"vgg7", kGray, 10}), std::invalid_argument);
  EXPECT_THROW(layer_count({"lenet", {1, 8, 8}, 10}), std::invalid_argument);
  EXPECT_THROW(layer_count({"vgg5", kGray, 1}), std::invalid_argument);
  EXPECT_THROW(ModelPart({"vgg5", kGray, 10}, 3, 8, 1), std::invalid_argument);
}

void expect_invalid_argument(const std::function<void()>& action, const std::string& fragment) {
  try {
    action();
    ADD_FAILURE() << "no std::invalid_argument; expected one with '" << fragment << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << e.what();
  }
}

// Found by fuzz_config: data.synthetic_shape = 3x4096x4096 with vgg16 made the check of
// a dry run build the model (a 34-billion-parameter fc1, 4 GiB convolution outputs):
// 12 GiB and still growing after 10 minutes. Both limits are refused before any tensor
// of that size is made.
TEST(ModelZoo, RefusesInputsAndLayersBeyondItsLimits) {
  expect_invalid_argument([] { layer_count({"vgg16", {3, 4096, 4096}, 10}); },
                          "cannot take input 3x4096x4096: allowed: at most 1048576 values "
                          "per sample");
  expect_invalid_argument([] { layer_count({"lenet", {4096, 64, 8}, 10}); },
                          "at most 1048576 values");
  // 1x1024x1024 is within the input limit, but vgg5's fc1 would take 64x256x256 inputs.
  expect_invalid_argument([] { layer_count({"vgg5", {1, 1024, 1024}, 10}); },
                          "layer fc1 would have 536871040 parameters (4194304 inputs); "
                          "allowed: at most 134217728 per layer");
  EXPECT_EQ(layer_count({"lenet", {1, 1024, 1024}, 10}), 7u);  // at the input limit
}

}  // namespace
}  // namespace cmlbed::model
