// AdaSplit's pieces, each against numbers worked out by hand or by a second route:
//  - the UCB orchestrator (scores, discounting, untried devices first, seeded ties,
//    random and all policies);
//  - the supervised NT-Xent loss (value on a 3-sample batch, gradient against finite
//    differences, positives chosen by label);
//  - per-device weight masks (W * sigmoid(M) in the forward, the L1 term's gradient,
//    training through one device's masks leaves another's unchanged).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "cmlbed/model/weight_masks.hpp"
#include "cmlbed/train/contrastive_objective.hpp"
#include "cmlbed/train/orchestrator.hpp"

namespace cmlbed::train {
namespace {

// ---- orchestrator ----

TEST(Orchestrator, UntriedDevicesGoFirstThenScoresFollowTheDiscountedFormula) {
  Orchestrator ucb(OrchestratorPolicy::ucb, 3, 2, 0.5, 7);
  ucb.record({{1, 2.0}});  // iteration 0: device 1 selected, cross-entropy 2
  EXPECT_EQ(ucb.select({1, 2, 3}), (std::vector<int>{2, 3}));  // never tried: +inf
  ucb.record({{2, 1.0}, {3, 3.0}});                            // iteration 1
  // After T = 2: device 1 has loss sum 0.5 x 2 = 1 over n = 0.5; devices 2 and 3 their
  // losses over n = 1; exploration sqrt(2 ln 2 / n).
  const std::vector<double> scores = ucb.scores();
  EXPECT_NEAR(scores[0], 1.0 / 0.5 + std::sqrt(2 * std::log(2.0) / 0.5), 1e-12);
  EXPECT_NEAR(scores[1], 1.0 + std::sqrt(2 * std::log(2.0)), 1e-12);
  EXPECT_NEAR(scores[2], 3.0 + std::sqrt(2 * std::log(2.0)), 1e-12);
  // 4.18 (device 3) > 3.67 (device 1) > 2.18 (device 2).
  EXPECT_EQ(ucb.select({1, 2, 3}), (std::vector<int>{1, 3}));
  EXPECT_EQ(ucb.select({1, 2}), (std::vector<int>{1, 2}));  // no more than wanted: all
}

TEST(Orchestrator, DiscountingForgetsOldLosses) {
  // Device 1 had a high loss long ago, device 2 a medium one recently; with a small
  // discount device 2 wins, with no discounting (1) the old high loss still counts.
  auto history = [](double discount) {
    Orchestrator ucb(OrchestratorPolicy::ucb, 2, 1, discount, 1);
    ucb.record({{1, 10.0}, {2, 1.0}});
    for (int i = 0; i < 5; ++i) ucb.record({{1, 0.1}, {2, 2.0}});
    return ucb.scores();
  };
  const auto forgetful = history(0.1);
  EXPECT_LT(forgetful[0], forgetful[1]);
  const auto remembering = history(1.0);
  // Means: device 1 (10 + 5 x 0.1) / 6 = 1.75 < device 2 (1 + 10) / 6 = 1.83; equal n.
  EXPECT_NEAR(remembering[0] - remembering[1], 1.75 - 11.0 / 6, 1e-12);
}

TEST(Orchestrator, TiesAreBrokenBySeededDrawsSoARunRepeats) {
  auto picks = [](std::uint64_t seed, OrchestratorPolicy policy) {
    Orchestrator orchestrator(policy, 6, 2, 0.75, seed);
    std::vector<std::vector<int>> chosen;
    for (int i = 0; i < 40; ++i) {
      chosen.push_back(orchestrator.select({1, 2, 3, 4, 5, 6}));
      std::map<int, double> losses;
      for (int d : chosen.back()) losses[d] = 1.0;  // equal losses: ties everywhere
      orchestrator.record(losses);
    }
    return chosen;
  };
  for (auto policy : {OrchestratorPolicy::ucb, OrchestratorPolicy::random}) {
    EXPECT_EQ(picks(3, policy), picks(3, policy));
    EXPECT_NE(picks(3, policy), picks(4, policy));
  }
  // The first three ucb iterations try all six devices, two each time.
  const auto first = picks(3, OrchestratorPolicy::ucb);
  std::set<int> tried;
  for (int i = 0; i < 3; ++i) tried.insert(first[static_cast<std::size_t>(i)].begin(), first[static_cast<std::size_t>(i)].end());
  EXPECT_EQ(tried.size(), 6u);
}

TEST(Orchestrator, RandomIsUniformAndAllTakesEveryEligibleDevice) {
  Orchestrator random(OrchestratorPolicy::random, 5, 2, 0.75, 11);
  std::vector<int> counts(5, 0);
  constexpr int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) {
    const auto chosen = random.select({1, 2, 3, 4, 5});
    ASSERT_EQ(chosen.size(), 2u);
    ASSERT_NE(chosen[0], chosen[1]);
    for (int d : chosen) ++counts[static_cast<std::size_t>(d - 1)];
  }
  // Each device: 2/5 of the draws; binomial sd = sqrt(20000 x 0.4 x 0.6) = 69.
  for (int c : counts) EXPECT_NEAR(c, kDraws * 2 / 5, 5 * 69);
  Orchestrator all(OrchestratorPolicy::all, 5, 2, 0.75, 11);
  EXPECT_EQ(all.select({1, 3, 4, 5}), (std::vector<int>{1, 3, 4, 5}));
  EXPECT_THROW(all.select({6}), std::out_of_range);
  EXPECT_THROW(Orchestrator(OrchestratorPolicy::ucb, 3, 1, 0.0, 1), std::invalid_argument);
}

// ---- supervised NT-Xent ----

TEST(SupervisedNtXent, MatchesAHandComputedBatch) {
  // z0 = (1,0), z1 = (0,1) share label 0; z2 = (1,1)/sqrt2 is alone in label 1, so it
  // anchors nothing. With temperature 1: s01 = 0, s02 = s12 = 1/sqrt2, and each of
  // anchors 0 and 1 has loss -(0 - log(e^0 + e^(1/sqrt2))).
  const torch::Tensor embeddings = torch::tensor({{1.0, 0.0}, {0.0, 2.0}, {3.0, 3.0}}, torch::kFloat64);
  const torch::Tensor labels = torch::tensor({0, 0, 1}, torch::kInt64);
  const double expected = std::log(1.0 + std::exp(1.0 / std::sqrt(2.0)));
  EXPECT_NEAR(supervised_nt_xent(embeddings, labels, 1.0).item<double>(), expected, 1e-12);
  // Temperature divides the similarities: at 0.5, s02 = sqrt2.
  EXPECT_NEAR(supervised_nt_xent(embeddings, labels, 0.5).item<double>(),
              std::log(1.0 + std::exp(std::sqrt(2.0))), 1e-12);
}

TEST(SupervisedNtXent, GradientMatchesFiniteDifferences) {
  torch::manual_seed(5);
  const torch::Tensor base = torch::randn({6, 4}, torch::kFloat64);
  const torch::Tensor labels = torch::tensor({0, 1, 0, 2, 1, 0}, torch::kInt64);
  torch::Tensor x = base.clone().set_requires_grad(true);
  supervised_nt_xent(x, labels, 0.3).backward();
  const torch::Tensor analytic = x.grad();
  constexpr double h = 1e-6;
  for (std::int64_t i = 0; i < 6; ++i) {
    for (std::int64_t j = 0; j < 4; ++j) {
      torch::Tensor up = base.clone(), down = base.clone();
      up[i][j] += h;
      down[i][j] -= h;
      const double numeric = (supervised_nt_xent(up, labels, 0.3).item<double>() -
                              supervised_nt_xent(down, labels, 0.3).item<double>()) / (2 * h);
      EXPECT_NEAR(analytic[i][j].item<double>(), numeric, 1e-6) << i << "," << j;
    }
  }
}

TEST(SupervisedNtXent, PositivesAreChosenByLabel) {
  torch::manual_seed(6);
  const torch::Tensor x = torch::randn({4, 3}, torch::kFloat64).set_requires_grad(true);
  // No two samples share a label: nothing to pull together, loss 0 and zero gradient.
  const torch::Tensor none = supervised_nt_xent(x, torch::tensor({0, 1, 2, 3}), 0.1);
  EXPECT_EQ(none.item<double>(), 0.0);
  none.backward();
  EXPECT_EQ(x.grad().abs().max().item<double>(), 0.0);
  // Different pairings of the same embeddings give different losses.
  const double pairs_a = supervised_nt_xent(x, torch::tensor({0, 0, 1, 1}), 0.1).item<double>();
  const double pairs_b = supervised_nt_xent(x, torch::tensor({0, 1, 0, 1}), 0.1).item<double>();
  EXPECT_GT(std::abs(pairs_a - pairs_b), 1e-6);
}

TEST(ProjectionHead, MapsImageAndFlatActivationsToEmbeddings) {
  ProjectionHead image({6, 12, 12}, 128, 64, 1);
  EXPECT_EQ(image.forward(torch::randn({5, 6, 12, 12})).sizes(), (std::vector<std::int64_t>{5, 64}));
  EXPECT_EQ(image.parameter_count(), 6 * 128 + 128 + 128 * 64 + 64);
  // 1x1 conv (2 x 6 per output + bias), leaky ReLU, max pool over 144 x 128 outputs;
  // then the linear layer.
  EXPECT_DOUBLE_EQ(image.forward_flops_per_sample(), 144.0 * 128 * (12 + 3) + 64 * (2 * 128 + 1));
  ProjectionHead flat({120}, 32, 16, 1);
  EXPECT_EQ(flat.forward(torch::randn({3, 120})).sizes(), (std::vector<std::int64_t>{3, 16}));
}

// ---- weight masks ----

struct TwoLayers : torch::nn::Module {
  TwoLayers() {
    conv = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(2, 3, 3)));
    linear = register_module("linear", torch::nn::Linear(12, 4));
  }
  torch::Tensor forward(const torch::Tensor& x) { return linear->forward(conv->forward(x).flatten(1)); }
  torch::nn::Conv2d conv{nullptr};
  torch::nn::Linear linear{nullptr};
};

TEST(WeightMasks, ForwardUsesWeightsTimesSigmoidOfTheMask) {
  torch::manual_seed(2);
  TwoLayers net;
  const model::WeightMasks masks(net, 9);
  ASSERT_EQ(masks.tensors().size(), 4u);  // conv weight, conv bias, linear weight, bias
  EXPECT_EQ(masks.entries(), 3 * 2 * 9 + 3 + 4 * 12 + 4);
  const torch::Tensor x = torch::randn({2, 2, 4, 4});
  const auto& m = masks.tensors();
  const torch::Tensor by_hand = torch::linear(
      torch::conv2d(x, net.conv->weight * torch::sigmoid(m[0]), net.conv->bias * torch::sigmoid(m[1])).flatten(1),
      net.linear->weight * torch::sigmoid(m[2]), net.linear->bias * torch::sigmoid(m[3]));
  torch::Tensor masked;
  {
    const auto applied = masks.apply(net);
    masked = net.forward(x);
  }
  EXPECT_TRUE(torch::allclose(masked, by_hand, 1e-6, 1e-6));
  // The weights are back once the guard is gone.
  EXPECT_TRUE(torch::equal(net.forward(x), torch::linear(torch::conv2d(x, net.conv->weight, net.conv->bias).flatten(1),
                                                          net.linear->weight, net.linear->bias)));
  EXPECT_TRUE(net.conv->weight.is_leaf());
}

TEST(WeightMasks, TheL1TermsGradientIsTheSigmoidsDerivative) {
  TwoLayers net;
  const model::WeightMasks masks(net, 3);
  masks.l1().backward();
  for (const auto& mask : masks.tensors()) {
    const torch::Tensor s = torch::sigmoid(mask.detach());
    EXPECT_TRUE(torch::allclose(mask.grad(), s * (1 - s), 1e-6, 1e-7));
  }
  // Drawn around 1 with sd 0.1, no entry is below 0 yet: sparsity 0. Pushing a quarter
  // of the linear weight's mask below zero shows up in it.
  EXPECT_EQ(masks.sparsity(), 0.0);
  {
    torch::NoGradGuard no_grad;
    masks.tensors()[2].narrow(0, 0, 1).fill_(-1.0);  // 12 of the 48 linear weights
  }
  EXPECT_NEAR(masks.sparsity(), 12.0 / static_cast<double>(masks.entries()), 1e-12);
}

TEST(WeightMasks, TrainingThroughOneDevicesMasksLeavesTheOthersUnchanged) {
  torch::manual_seed(4);
  TwoLayers net;
  model::WeightMasks first(net, 1), second(net, 2);
  std::vector<torch::Tensor> before;
  for (const auto& m : second.tensors()) before.push_back(m.detach().clone());
  const torch::Tensor weight_before = net.linear->weight.detach().clone();
  torch::optim::Adam weights(net.parameters(), torch::optim::AdamOptions(0.01));
  torch::optim::Adam first_masks(first.tensors(), torch::optim::AdamOptions(0.01));
  torch::optim::Adam second_masks(second.tensors(), torch::optim::AdamOptions(0.01));
  for (int step = 0; step < 3; ++step) {
    torch::Tensor loss;
    {
      const auto applied = first.apply(net);
      loss = net.forward(torch::randn({4, 2, 4, 4})).pow(2).mean() + 1e-3 * first.l1();
    }
    loss.backward();
    weights.step();
    first_masks.step();
    second_masks.step();  // no gradients: must not move
    weights.zero_grad();
    first_masks.zero_grad();
  }
  for (std::size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(torch::equal(second.tensors()[i], before[i]));
  EXPECT_FALSE(torch::equal(net.linear->weight, weight_before));
  EXPECT_FALSE(second.tensors()[0].grad().defined());
}

}  // namespace
}  // namespace cmlbed::train
