#include "cmlbed/train/privacy.hpp"

#include "cmlbed/base/seed_streams.hpp"

#include "cmlbed/config/methods.hpp"
#include "cmlbed/train/local_training.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace cmlbed::train {

PrivacySettings privacy_settings(const Settings& settings) {
  PrivacySettings s;
  const std::string& mechanism = settings.privacy.mechanism;
  s.mechanism = mechanism == "gaussian"  ? PrivacyMechanism::gaussian
                : mechanism == "laplace" ? PrivacyMechanism::laplace
                                         : PrivacyMechanism::none;
  s.clip = settings.privacy.clip;
  s.noise_multiplier = settings.privacy.noise_multiplier;
  s.delta = settings.privacy.delta;
  return s;
}

std::uint64_t noise_seed(std::uint64_t seed, int rank, int round, int batch, int micro_batch) {
  return stream_seed(seed, "dp_noise", {rank, round, batch, micro_batch});
}

torch::Tensor clip_rows(const torch::Tensor& activation, double clip, bool l1) {
  const torch::Tensor rows = activation.flatten(1);
  const torch::Tensor norms = l1 ? rows.abs().sum(1) : rows.pow(2).sum(1).sqrt();
  // Scale = min(1, clip / norm); the 1e-12 keeps an all-zero row at zero.
  const torch::Tensor scale = (clip / (norms + 1e-12)).clamp_max(1.0);
  std::vector<std::int64_t> shape(static_cast<std::size_t>(activation.dim()), 1);
  shape[0] = activation.size(0);
  return activation * scale.view(shape);
}

torch::Tensor noise_like(const torch::Tensor& tensor, double scale, bool laplace, std::uint64_t seed) {
  at::Generator generator = at::detail::createCPUGenerator(seed);
  const auto options = tensor.options().requires_grad(false);
  if (!laplace) return torch::randn(tensor.sizes(), generator, options) * scale;
  // Laplace by inversion: u uniform in (-1/2, 1/2), -b sign(u) log(1 - 2|u|).
  const torch::Tensor u = torch::rand(tensor.sizes(), generator, options) - 0.5;
  return -scale * u.sign() * torch::log1p(-2 * u.abs());
}

torch::Tensor privatize_activation(const torch::Tensor& activation, const PrivacySettings& settings,
                                   std::uint64_t seed) {
  if (!settings.on()) return activation;
  const bool laplace = settings.mechanism == PrivacyMechanism::laplace;
  const torch::Tensor clipped = clip_rows(activation, settings.clip, laplace);
  if (settings.noise_multiplier == 0) return clipped;
  return clipped + noise_like(clipped, settings.noise_multiplier * settings.clip, laplace, seed);
}

namespace {

void check_weights(const torch::Tensor& state, std::int64_t weights, const char* who) {
  if (state.dim() != 1 || weights < 0 || weights > state.numel()) {
    throw std::invalid_argument(std::string(who) + ": " + std::to_string(weights) + " weights in a state of " +
                                std::to_string(state.numel()) + " entries");
  }
}

}  // namespace

torch::Tensor clip_model_update(const torch::Tensor& state, const torch::Tensor& reference, std::int64_t weights,
                                double clip) {
  check_weights(state, weights, "clip_model_update");
  if (!reference.sizes().equals(state.sizes())) throw std::invalid_argument("clip_model_update: reference of another size");
  const torch::Tensor start = reference.slice(0, 0, weights);
  const torch::Tensor update = state.slice(0, 0, weights) - start;
  const torch::Tensor clipped = start + clip_rows(update.unsqueeze(0), clip, false).squeeze(0);
  return torch::cat({clipped, state.slice(0, weights)});
}

torch::Tensor noise_model_average(const torch::Tensor& average, std::int64_t weights, double scale,
                                  std::uint64_t seed) {
  check_weights(average, weights, "noise_model_average");
  const torch::Tensor noisy = average.slice(0, 0, weights);
  return torch::cat({noisy + noise_like(noisy, scale, false, seed), average.slice(0, weights)});
}

double gaussian_epsilon(double noise_multiplier, std::int64_t releases, double delta, double sensitivity) {
  if (noise_multiplier <= 0) return std::numeric_limits<double>::infinity();
  if (releases <= 0) return 0;
  // Noise sigma C against a sensitivity of s C is noise sigma / s against sensitivity 1.
  const double sigma = noise_multiplier / sensitivity;
  const double per_alpha = static_cast<double>(releases) / (2 * sigma * sigma);
  const double log_inverse_delta = std::log(1 / delta);
  // The minimum of per_alpha x alpha + L / (alpha - 1) over alpha > 1 is at
  // alpha = 1 + sqrt(L / per_alpha): per_alpha + 2 sqrt(per_alpha x L).
  return per_alpha + 2 * std::sqrt(per_alpha * log_inverse_delta);
}

double privacy_sensitivity(const Settings& settings) {
  return settings.privacy.adjacency == "replace-one" ? 2.0 : 1.0;
}

std::int64_t privacy_releases(const Settings& settings, const std::vector<std::size_t>& samples) {
  const TrainingSettings training = training_settings(settings);
  // DP-FedAvg releases one noisy average per aggregation; activation noise, one per
  // sample use.
  if (method_traits(settings.experiment.method).noise == NoiseTarget::model_updates) {
    return (training.rounds + training.aggregate_every - 1) / training.aggregate_every;
  }
  std::int64_t per_round = 0;
  for (const std::size_t n : samples) {
    if (n == 0) continue;
    const std::int64_t used = batches_per_round(n, training) * training.batch_size;
    per_round = std::max<std::int64_t>(per_round, (used + static_cast<std::int64_t>(n) - 1) / static_cast<std::int64_t>(n));
  }
  return per_round * training.rounds;
}

}  // namespace cmlbed::train
