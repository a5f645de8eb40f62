#pragma once
// Differential privacy ([privacy], docs/explanation/privacy.md). The PiPar authors' code has none, so
// these are the standard mechanisms:
// - split methods: each device clips every sample's uploaded activation (L2 norm for the
//   Gaussian mechanism, L1 for Laplace) to privacy.clip and adds noise of standard
//   deviation (Gaussian) or scale (Laplace) noise_multiplier x clip: noise on the smashed
//   data. Gradients flow back through the clipping; the noise is a constant.
// - fl: DP-FedAvg: each device clips the update of its weights (L2) to clip; the server
//   adds Gaussian noise of standard deviation noise_multiplier x clip / devices to the
//   average of the weights. Buffers (batch-norm running statistics) are averaged as they
//   are: noise would turn running variances negative, and the epsilon does not cover them.
// Noise is drawn from its own generator seeded from (experiment.seed, rank, round, batch,
// micro-batch): repeatable, and independent of LibTorch's default generator.
#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "cmlbed/config/settings.hpp"

namespace cmlbed::train {

enum class PrivacyMechanism { none, gaussian, laplace };

struct PrivacySettings {
  PrivacyMechanism mechanism = PrivacyMechanism::none;
  double clip = 1.0;
  double noise_multiplier = 1.0;
  double delta = 1e-5;
  bool on() const { return mechanism != PrivacyMechanism::none; }
};
PrivacySettings privacy_settings(const Settings& settings);

// A seed for one release: (experiment seed, rank, round, batch, micro-batch) mixed.
std::uint64_t noise_seed(std::uint64_t seed, int rank, int round, int batch, int micro_batch);

// Every row (sample) of `activation` scaled to a norm of at most `clip` (L2 or L1),
// differentiably.
torch::Tensor clip_rows(const torch::Tensor& activation, double clip, bool l1);

// The activation a device uploads under `settings` (unchanged when off).
torch::Tensor privatize_activation(const torch::Tensor& activation, const PrivacySettings& settings,
                                   std::uint64_t seed);

// Noise of `tensor`'s shape: Gaussian with standard deviation `scale`, or Laplace with
// scale `scale`, from a generator seeded with `seed`.
torch::Tensor noise_like(const torch::Tensor& tensor, double scale, bool laplace, std::uint64_t seed);

// DP-FedAvg on a flat model state (flat_state: the parameters' `weights` entries first,
// then the buffers). clip_model_update: `state` with the update of its weights since
// `reference` clipped to L2 norm `clip`, its buffers unchanged. noise_model_average:
// `average` with Gaussian noise of standard deviation `scale` on its weights only.
torch::Tensor clip_model_update(const torch::Tensor& state, const torch::Tensor& reference, std::int64_t weights,
                                double clip);
torch::Tensor noise_model_average(const torch::Tensor& average, std::int64_t weights, double scale,
                                  std::uint64_t seed);

// (epsilon, delta) of `releases` Gaussian releases of one sample (or one device's update)
// with noise_multiplier sigma and L2 sensitivity `sensitivity` clips (1: add-remove, 2:
// replace-one; privacy_sensitivity), composed with Renyi-DP and converted with epsilon =
// min over alpha > 1 of releases x alpha s^2 / (2 sigma^2) + log(1/delta) / (alpha - 1).
// No amplification by subsampling: an upper bound. Infinity for sigma = 0.
double gaussian_epsilon(double noise_multiplier, std::int64_t releases, double delta, double sensitivity = 1);

// The L2 sensitivity of one clipped release in units of privacy.clip under the
// configured privacy.adjacency: C when a sample (fl: a device's data) is added or removed,
// 2C when it is replaced by another (two vectors of norm <= C differ by up to 2C).
double privacy_sensitivity(const Settings& settings);

// How often one sample (split methods) or one device's update (fl) is released over the
// run, at most: split methods, rounds x ceil(mini-batches per round x batch / samples)
// for the device with the fewest samples per release (AdaSplit counted as if every
// batch were picked in every round); fl, the aggregations. `samples`: each device's.
std::int64_t privacy_releases(const Settings& settings, const std::vector<std::size_t>& samples);

}  // namespace cmlbed::train
