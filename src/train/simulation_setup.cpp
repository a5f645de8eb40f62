#include "cmlbed/train/simulation_setup.hpp"

#include "cmlbed/config/config_error.hpp"
#include "cmlbed/data/partition.hpp"
#include "cmlbed/model/part_cost.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/train/local_training.hpp"

namespace cmlbed::train {
namespace {

// Layers [first, last) at 0..batch samples, timed from `rank`'s profile (stretched by
// `stretch`), or, with a compute rate (devices.flops), paced: FLOPs / rate.
plan::SimulatedPart simulated_part(const plan::Profile& profile, const plan::RankProfile& rank,
                                   const std::vector<model::LayerStats>& stats, std::size_t first, std::size_t last,
                                   bool input_needs_gradient, const TrainingSettings& settings, double stretch,
                                   std::optional<double> rate) {
  const model::PartCost cost = model::part_cost(stats, first, last, input_needs_gradient);
  plan::SimulatedPart part;
  part.forward_flops_per_sample = cost.forward_per_sample;
  part.backward_flops_per_sample = cost.backward_per_sample;
  part.step_flops = step_flops(cost.parameters, settings);
  for (std::int64_t n = 0; n <= settings.batch_size; ++n) {
    const auto samples = static_cast<double>(n);
    double forward = 0, backward = 0;
    if (rate) {
      forward = samples * cost.forward_per_sample / *rate;
      backward = samples * cost.backward_per_sample / *rate;
    } else {
      for (std::size_t l = first; l < last; ++l) {
        forward += plan::at_batch_size(profile.batch_sizes, rank.layers[l].forward_s, samples);
        backward += plan::at_batch_size(profile.batch_sizes, rank.layers[l].backward_s, samples);
      }
      forward *= stretch;
      backward *= stretch;
    }
    part.forward_s.push_back(forward);
    part.backward_s.push_back(backward);
  }
  if (rate) {
    part.step_s = part.step_flops / *rate;
  } else {
    for (std::size_t l = first; l < last; ++l) part.step_s += rank.layers[l].step_s * stretch;
  }
  return part;
}

const plan::RankProfile& rank_profile(const plan::Profile& profile, int rank) {
  if (rank < static_cast<int>(profile.ranks.size())) return profile.ranks[static_cast<std::size_t>(rank)];
  return profile.ranks.back();
}

}  // namespace

std::vector<std::size_t> device_sample_counts(const Config& config, int devices) {
  const data::Dataset dataset = load_dataset(config);
  std::vector<std::size_t> counts;
  for (const auto& indices :
       data::partition_indices(dataset.train.labels, dataset.train.num_classes, partition_spec(config, devices))) {
    counts.push_back(indices.size());
  }
  return counts;
}

plan::SimulationInput simulation_input(const Config& config, const plan::Profile& profile,
                                       const std::vector<std::size_t>& samples, const PlanOverride& override) {
  return simulation_input(config, profile, samples, override, model::layer_stats(training_settings(config).model));
}

plan::SimulationInput simulation_input(const Config& config, const plan::Profile& profile,
                                       const std::vector<std::size_t>& samples, const PlanOverride& override,
                                       const std::vector<model::LayerStats>& stats) {
  const int devices = static_cast<int>(samples.size());
  const TrainingSettings settings = training_settings(config);
  const std::string method = config.text("experiment.method");
  if (method != "fl" && method != "sl" && method != "sfl" && method != "pipar") {
    throw ConfigError("simulate: experiment.method = " + method +
                      " cannot be simulated yet (fl, sl, sfl and pipar can)");
  }
  if (profile.model != config.text("model.name")) {
    throw ConfigError("simulate: the profile is of model " + profile.model + ", the configuration's is " +
                      config.text("model.name"));
  }
  if (profile.batch_sizes.back() < settings.batch_size) {
    throw ConfigError("simulate: the profile measured batches of up to " + std::to_string(profile.batch_sizes.back()) +
                      " samples; train.batch_size = " + std::to_string(settings.batch_size) + " needs a new profile");
  }
  const std::size_t layers = stats.size();
  for (const plan::RankProfile& rank : profile.ranks) {
    if (rank.layers.size() != layers) {
      throw ConfigError("simulate: the profile's rank " + std::to_string(rank.rank) + " has " +
                        std::to_string(rank.layers.size()) + " layers, the model " + std::to_string(layers));
    }
  }
  plan::SimulationInput input;
  input.method = method;
  input.batch_size = settings.batch_size;
  input.rounds = settings.rounds;
  input.aggregate_every = settings.aggregate_every;
  input.model_parameters = model::part_cost(stats, 0, layers, false).parameters;
  input.aggregate_s_per_parameter = profile.ranks.front().aggregate_s_per_parameter;
  const plan::RankProfile& server = profile.ranks.front();
  for (int d = 1; d <= devices; ++d) {
    const std::size_t split = method == "fl"     ? layers
                              : override.split ? *override.split
                                               : static_cast<std::size_t>(config.integer("model.split", d));
    plan::SimulatedDevice device;
    device.micro_batches = method != "pipar"          ? 1
                           : override.micro_batches ? *override.micro_batches
                                                    : static_cast<int>(config.integer("pipar.micro_batches", d));
    device.samples = static_cast<std::int64_t>(samples[static_cast<std::size_t>(d - 1)]);
    device.batches = batches_per_round(samples[static_cast<std::size_t>(d - 1)], settings);
    device.uplink = link_spec(config, d, LinkDirection::uplink);
    device.downlink = link_spec(config, d, LinkDirection::downlink);
    device.part = simulated_part(profile, rank_profile(profile, d), stats, 0, split, false, settings,
                                 config.real("devices.slowdown", d), config.compute_rate_flops("devices.flops", d));
    device.activation_bytes_per_sample = split == 0 ? settings.model.input.elements() * 4
                                                    : stats[split - 1].activation_bytes_per_sample;
    device.part_parameters = model::part_cost(stats, 0, split, false).parameters;
    if (method != "fl") {
      device.server = simulated_part(profile, server, stats, split, layers, true, settings, 1.0, std::nullopt);
    }
    input.devices.push_back(std::move(device));
  }
  return input;
}

}  // namespace cmlbed::train
