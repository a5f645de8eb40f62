// [privacy]: clipping bounds every row, the noise has the asked-for distribution and is
// repeatable, `none` leaves the activation untouched, and the (epsilon, delta) figure
// matches the textbook Renyi-DP bound.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cmlbed/train/privacy.hpp"

namespace cmlbed::train {
namespace {

TEST(Privacy, ClippedRowsAreWithinTheNormAndSmallRowsStay) {
  torch::manual_seed(3);
  const torch::Tensor activation = torch::randn({64, 4, 5, 5}) * torch::linspace(0.01, 5, 64).view({64, 1, 1, 1});
  for (const bool l1 : {false, true}) {
    const double clip = 2.0;
    const torch::Tensor clipped = clip_rows(activation, clip, l1);
    const torch::Tensor norms = l1 ? clipped.flatten(1).abs().sum(1) : clipped.flatten(1).norm(2, 1);
    const torch::Tensor before = l1 ? activation.flatten(1).abs().sum(1) : activation.flatten(1).norm(2, 1);
    for (std::int64_t i = 0; i < 64; ++i) {
      EXPECT_LE(norms[i].item<double>(), clip * (1 + 1e-6)) << "row " << i << (l1 ? " L1" : " L2");
      if (before[i].item<double>() <= clip) {
        EXPECT_TRUE(torch::equal(clipped[i], activation[i])) << "row " << i << " was within the norm";
      }
    }
  }
}

TEST(Privacy, GradientsFlowThroughTheClipping) {
  const torch::Tensor x = torch::full({2, 3}, 2.0, torch::requires_grad());
  clip_rows(x, 1.0, false).sum().backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_TRUE(torch::isfinite(x.grad()).all().item<bool>());
}

TEST(Privacy, NoiseHasTheAskedForMeanAndSpread) {
  const torch::Tensor shape = torch::zeros({1000000});
  const torch::Tensor gaussian = noise_like(shape, 0.5, false, 7);
  EXPECT_NEAR(gaussian.mean().item<double>(), 0.0, 0.002);
  EXPECT_NEAR(gaussian.std().item<double>(), 0.5, 0.005);
  const torch::Tensor laplace = noise_like(shape, 0.5, true, 7);
  EXPECT_NEAR(laplace.mean().item<double>(), 0.0, 0.003);
  EXPECT_NEAR(laplace.std().item<double>(), 0.5 * std::sqrt(2.0), 0.01);   // Laplace(b): std = b sqrt 2
  EXPECT_NEAR(laplace.abs().mean().item<double>(), 0.5, 0.005);              // E|x| = b
}

TEST(Privacy, NoiseIsRepeatableAndSeedsDiffer) {
  const torch::Tensor shape = torch::zeros({100});
  EXPECT_TRUE(torch::equal(noise_like(shape, 1, false, 11), noise_like(shape, 1, false, 11)));
  EXPECT_FALSE(torch::equal(noise_like(shape, 1, false, 11), noise_like(shape, 1, false, 12)));
  EXPECT_NE(noise_seed(1, 2, 3, 4, 5), noise_seed(1, 2, 3, 5, 4));
  EXPECT_NE(noise_seed(1, 1, 0, 0, 0), noise_seed(1, 2, 0, 0, 0));
}

TEST(Privacy, NoneLeavesTheActivationUntouched) {
  const torch::Tensor activation = torch::randn({4, 10});
  PrivacySettings none;
  EXPECT_TRUE(privatize_activation(activation, none, 1).is_same(activation));
  PrivacySettings gaussian;
  gaussian.mechanism = PrivacyMechanism::gaussian;
  gaussian.noise_multiplier = 0;
  gaussian.clip = 1e9;  // nothing to clip, no noise: the same values
  EXPECT_TRUE(torch::equal(privatize_activation(activation, gaussian, 1), activation));
}

TEST(Privacy, DpFedAvgClipsTheWeightsUpdateAndLeavesTheBuffers) {
  // 6 weights, then 4 buffer entries (running means, variances, a counter).
  const torch::Tensor reference = torch::arange(10, torch::kFloat32);
  const torch::Tensor far = reference + torch::tensor({3.f, -4.f, 0.f, 0.f, 0.f, 0.f, 7.f, -9.f, 0.5f, 2.f});
  const torch::Tensor clipped = clip_model_update(far, reference, 6, 1.0);
  EXPECT_NEAR((clipped.slice(0, 0, 6) - reference.slice(0, 0, 6)).norm().item<double>(), 1.0, 1e-6);
  EXPECT_TRUE(torch::allclose(clipped.slice(0, 0, 2) - reference.slice(0, 0, 2), torch::tensor({0.6f, -0.8f})));
  EXPECT_TRUE(torch::equal(clipped.slice(0, 6), far.slice(0, 6))) << "the buffers were clipped";
  const torch::Tensor near = reference + 0.1;  // an update within the clip stays as it is
  EXPECT_TRUE(torch::allclose(clip_model_update(near, reference, 6, 1.0), near));
  EXPECT_THROW(clip_model_update(far, reference, 11, 1.0), std::invalid_argument);
  EXPECT_THROW(clip_model_update(far, reference.slice(0, 0, 9), 6, 1.0), std::invalid_argument);
}

TEST(Privacy, DpFedAvgNoisesTheWeightsOnly) {
  const torch::Tensor average = torch::ones({10000});
  const torch::Tensor noisy = noise_model_average(average, 9000, 0.5, 5);
  EXPECT_TRUE(torch::equal(noisy.slice(0, 9000), average.slice(0, 9000))) << "the buffers got noise";
  EXPECT_NEAR((noisy.slice(0, 0, 9000) - 1).std().item<double>(), 0.5, 0.02);
  EXPECT_TRUE(torch::equal(noisy, noise_model_average(average, 9000, 0.5, 5)));
  EXPECT_THROW(noise_model_average(average, -1, 0.5, 5), std::invalid_argument);
}

TEST(Privacy, EpsilonOfTheGaussianMechanismMatchesTheRdpBound) {
  // One release, sigma = 1, delta = 1e-5: 1/2 + 2 sqrt(ln(1e5) / 2) = 5.2985 (Mironov 2017,
  // Prop. 3, with the Gaussian's RDP alpha / (2 sigma^2), minimised over alpha).
  EXPECT_NEAR(gaussian_epsilon(1.0, 1, 1e-5), 5.29853, 1e-4);
  // Independently: the minimum over a fine grid of alpha.
  for (const auto& [sigma, releases] : {std::pair{1.1, 100}, std::pair{4.0, 1000}, std::pair{0.7, 3}}) {
    double best = std::numeric_limits<double>::infinity();
    for (double alpha = 1.0001; alpha < 2000; alpha *= 1.0001) {
      best = std::min(best, releases * alpha / (2 * sigma * sigma) + std::log(1e5) / (alpha - 1));
    }
    EXPECT_NEAR(gaussian_epsilon(sigma, releases, 1e-5), best, best * 1e-6) << sigma << " " << releases;
  }
  EXPECT_TRUE(std::isinf(gaussian_epsilon(0, 1, 1e-5)));
  // Replace-one doubles the sensitivity: the epsilon of half the noise under add-remove.
  EXPECT_DOUBLE_EQ(gaussian_epsilon(2.0, 7, 1e-5, 2.0), gaussian_epsilon(1.0, 7, 1e-5));
  EXPECT_GT(gaussian_epsilon(1.0, 7, 1e-5, 2.0), gaussian_epsilon(1.0, 7, 1e-5));
  EXPECT_EQ(gaussian_epsilon(1, 0, 1e-5), 0);
}

}  // namespace
}  // namespace cmlbed::train
