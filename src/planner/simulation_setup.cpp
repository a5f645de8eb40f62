#include "cmlbed/planner/simulation_setup.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include "cmlbed/train/adasplit_costs.hpp"
#include "cmlbed/train/contrastive_objective.hpp"
#include "cmlbed/model/split_model.hpp"
#include "cmlbed/model/weight_masks.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/methods.hpp"
#include "cmlbed/data/partition.hpp"
#include "cmlbed/model/part_cost.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/train/local_training.hpp"
#include "cmlbed/train/orchestrator.hpp"

namespace cmlbed::planner {

using train::TrainingSettings;
using train::step_flops;
using train::batches_per_round;
using train::AdaSplitSettings;
using train::ProjectionHead;
using train::adasplit_device_forward_flops;
using train::adasplit_device_backward_flops;
using train::adasplit_server_forward_flops;
using train::adasplit_server_backward_flops;
using train::Orchestrator;

namespace {

// Layers [first, last) at 0..most samples, timed from `rank`'s profile (its medians
// times its stage factor, stretched by `stretch`), or, with a compute rate (devices.flops), paced: FLOPs / rate, their work
// the profile's time. Threads: the rank's intra-op threads (the cores its work asks for).
sim::SimulatedPart simulated_part(const sim::Profile& profile, const sim::RankProfile& rank,
                                   const std::vector<model::LayerStats>& stats, std::size_t first, std::size_t last,
                                   bool input_needs_gradient, const TrainingSettings& settings, double stretch,
                                   std::optional<double> rate, int threads, std::int64_t most) {
  const model::PartCost cost = model::part_cost(stats, first, last, input_needs_gradient);
  sim::SimulatedPart part;
  part.stretch = rate ? 1.0 : stretch;
  part.paced = rate.has_value();
  part.threads = threads;
  part.wake_s = rank.wake_s;
  part.step_flops = step_flops(cost.parameters, settings);
  for (std::int64_t n = 0; n <= most; ++n) {
    const auto samples = static_cast<double>(n);
    part.forward_flops.push_back(samples * cost.forward_per_sample);
    part.backward_flops.push_back(samples * cost.backward_per_sample);
    double forward = 0, backward = 0;  // this host's time
    for (std::size_t l = first; l < last; ++l) {
      forward += sim::at_batch_size(profile.batch_sizes, rank.layers[l].forward_s, samples);
      backward += sim::at_batch_size(profile.batch_sizes, rank.layers[l].backward_s, samples);
    }
    forward *= rank.stage_factor;  // what the stages cost beyond their layers (RankProfile)
    backward *= rank.stage_factor;
    if (rate) {
      part.forward_work_s.push_back(forward);
      part.backward_work_s.push_back(backward);
      part.forward_s.push_back(part.forward_flops.back() / *rate);
      part.backward_s.push_back(part.backward_flops.back() / *rate);
    } else {
      part.forward_s.push_back(forward * stretch);
      part.backward_s.push_back(backward * stretch);
    }
  }
  double step = 0;
  for (std::size_t l = first; l < last; ++l) step += rank.layers[l].step_s;
  step *= rank.stage_factor;
  if (rate) {
    part.step_work_s = step;
    part.step_s = part.step_flops / *rate;
  } else {
    part.step_s = step * stretch;
  }
  return part;
}

// Work the profile does not time (adasplit's projection head, contrastive loss and
// masks) added to a part: extra FLOPs forward / backward at n samples and in the step. Paced,
// it lasts its FLOPs / rate; timed, it takes the part's own seconds per FLOP at n samples
// (an estimate: the head and loss are small dense layers, the masks elementwise work).
void add_untimed_work(sim::SimulatedPart& part, const std::function<double(std::int64_t)>& forward_flops,
                      const std::function<double(std::int64_t)>& backward_flops, double step_flops,
                      std::optional<double> rate) {
  const auto seconds_per_flop = [](double seconds, double flops) { return flops > 0 ? seconds / flops : 0.0; };
  // `extra` FLOPs more on a stage of `seconds` (and, paced, `work` seconds of host time)
  // that counted `flops`.
  const auto add = [&](double& seconds, double* work, double flops, double extra) {
    if (work != nullptr) *work += extra * seconds_per_flop(*work, flops);
    seconds += extra * (rate ? 1 / *rate : seconds_per_flop(seconds, flops));
  };
  const auto work_at = [](std::vector<double>& work, std::size_t n) { return work.empty() ? nullptr : &work[n]; };
  for (std::size_t n = 0; n < part.forward_s.size(); ++n) {
    const auto samples = static_cast<std::int64_t>(n);
    const double extra_forward = forward_flops(samples) - part.forward_flops[n];
    const double extra_backward = backward_flops(samples) - part.backward_flops[n];
    add(part.forward_s[n], work_at(part.forward_work_s, n), part.forward_flops[n], extra_forward);
    add(part.backward_s[n], work_at(part.backward_work_s, n), part.backward_flops[n], extra_backward);
    part.forward_flops[n] += extra_forward;
    part.backward_flops[n] += extra_backward;
  }
  add(part.step_s, part.paced ? &part.step_work_s : nullptr, part.step_flops, step_flops - part.step_flops);
  part.step_flops = step_flops;
}

// adasplit: each device's part with its projection head and contrastive loss, the
// server's with its masks, and the orchestrator's picks. The picks come from the run's
// own orchestrator (same policy and seed): exact for `random` and `all`; for `ucb`, which
// follows the losses of the server's training, every picked device is recorded with the
// same loss (this simulator knows no losses), so its picks rotate through the devices.
void add_adasplit(sim::SimulationInput& input, const PlanSpec& spec, std::size_t split) {
  // Validation (setup/validate.cpp) has kept model.split in 1..layers-1, the same for
  // every device.
  const AdaSplitSettings& ada = *spec.adasplit;
  const TrainingSettings& settings = spec.training;
  const std::vector<model::LayerStats>& stats = spec.stats;
  const std::size_t layers = stats.size();
  const model::PartCost device_cost = model::part_cost(stats, 0, split, false);
  const model::PartCost server_cost = model::part_cost(stats, split, layers, false);
  const ProjectionHead head(stats[split - 1].output_shape, ada.head_channels, ada.embedding_dim, settings.seed);
  model::ModelPart server_part(settings.model, split, layers, settings.seed);
  const std::int64_t entries = model::WeightMasks(server_part, settings.seed).entries();
  const double head_forward = head.forward_flops_per_sample();
  const int devices = static_cast<int>(input.devices.size());
  for (int d = 1; d <= devices; ++d) {
    sim::SimulatedDevice& device = input.devices[static_cast<std::size_t>(d - 1)];
    const std::optional<double> rate = spec.devices[static_cast<std::size_t>(d - 1)].flops_per_second;
    add_untimed_work(
        device.part,
        [&](std::int64_t n) { return adasplit_device_forward_flops(device_cost, head_forward, n, ada.embedding_dim); },
        [&](std::int64_t n) { return adasplit_device_backward_flops(device_cost, head_forward, n, ada.embedding_dim); },
        step_flops(device_cost.parameters + head.parameter_count(), settings), rate);
    add_untimed_work(
        device.server, [&](std::int64_t n) { return adasplit_server_forward_flops(server_cost, entries, n); },
        [&](std::int64_t n) { return adasplit_server_backward_flops(server_cost, entries, n); },
        step_flops(server_cost.parameters + entries, settings), std::nullopt);
  }
  input.adasplit.local_rounds = ada.local_rounds;
  Orchestrator orchestrator(ada.policy, devices, ada.selected, ada.discount, settings.seed);
  std::int64_t iterations = 0;
  for (const auto& device : input.devices) iterations = std::max(iterations, device.batches);
  for (int round = ada.local_rounds; round < settings.rounds; ++round) {
    auto& picks = input.adasplit.chosen.emplace_back();
    for (std::int64_t b = 0; b < iterations; ++b) {
      std::vector<int> eligible;
      for (int d = 1; d <= devices; ++d) {
        if (b < input.devices[static_cast<std::size_t>(d - 1)].batches) eligible.push_back(d);
      }
      picks.push_back(orchestrator.select(eligible));
      std::map<int, double> losses;
      for (int d : picks.back()) losses[d] = 1.0;
      orchestrator.record(losses);
    }
  }
}

const sim::RankProfile& rank_profile(const sim::Profile& profile, int rank) {
  if (rank < static_cast<int>(profile.ranks.size())) return profile.ranks[static_cast<std::size_t>(rank)];
  return profile.ranks.back();
}

}  // namespace

SampleCounts sample_counts(const Settings& settings, int devices) {
  const data::DatasetLabels dataset = load_labels(settings);
  SampleCounts counts;
  counts.test = dataset.test_samples;
  for (const auto& indices :
       data::partition_indices(dataset.train_labels, dataset.num_classes, partition_spec(settings, devices))) {
    counts.devices.push_back(indices.size());
  }
  return counts;
}

std::vector<std::size_t> device_sample_counts(const Settings& settings, int devices) {
  return sample_counts(settings, devices).devices;
}

double evaluation_seconds(const PlanSpec& spec, const sim::Profile& profile, std::size_t test_samples,
                          int devices) {
  double forward = 0;  // the whole model at the largest measured batch
  for (const sim::LayerProfile& layer : profile.ranks.front().layers) forward += layer.forward_s.back();
  forward *= profile.ranks.front().stage_factor;
  // One model, or one per device (adasplit, personalised runs: each device's part with the server's).
  const double models = spec.traits().personalised_always || spec.personalised ? devices : 1;
  return models * static_cast<double>(test_samples) * forward / static_cast<double>(profile.batch_sizes.back());
}

// localloss: each device's part with its auxiliary head (AdaSplit's projection head, one
// output per class) and cross-entropy, as train/local_loss.cpp counts them; the part and
// head are what a device uploads for averaging.
void add_local_loss(sim::SimulationInput& input, const PlanSpec& spec, std::size_t split) {
  const TrainingSettings& settings = spec.training;
  const std::vector<model::LayerStats>& stats = spec.stats;
  const model::PartCost device_cost = model::part_cost(stats, 0, split, false);
  const ProjectionHead head(stats[split - 1].output_shape, spec.head_hidden, stats.back().output_shape.front(),
                            settings.seed);
  const double head_forward = head.forward_flops_per_sample();
  for (std::size_t d = 0; d < input.devices.size(); ++d) {
    sim::SimulatedDevice& device = input.devices[d];
    add_untimed_work(
        device.part,
        [&](std::int64_t n) { return static_cast<double>(n) * (device_cost.forward_per_sample + head_forward); },
        [&](std::int64_t n) { return static_cast<double>(n) * (device_cost.backward_per_sample + 2 * head_forward); },
        step_flops(device_cost.parameters + head.parameter_count(), settings), spec.devices[d].flops_per_second);
    device.part_state_values += head.parameter_count();
  }
  input.upload_every = spec.upload_every;
}

sim::SimulationInput simulation_input(const PlanSpec& spec, const sim::Profile& profile,
                                       const std::vector<std::size_t>& samples, const PlanOverride& override) {
  const int devices = static_cast<int>(samples.size());
  if (spec.devices.size() < samples.size()) {
    throw std::invalid_argument("simulation_input: a spec of " + std::to_string(spec.devices.size()) + " devices, " +
                                std::to_string(samples.size()) + " devices with data");
  }
  const TrainingSettings& settings = spec.training;
  const std::vector<model::LayerStats>& stats = spec.stats;
  const MethodTraits& method = spec.traits();
  if (!method.simulatable) {
    throw ConfigError("simulate: experiment.method = " + method.name + " cannot be simulated (" +
                      method_list(&MethodTraits::simulatable, "and") + " can)");
  }
  if (profile.model != spec.model_name) {
    throw ConfigError("simulate: the profile is of model " + profile.model + ", the configuration's is " +
                      spec.model_name);
  }
  if (profile.batch_sizes.back() < settings.batch_size) {
    throw ConfigError("simulate: the profile measured batches of up to " + std::to_string(profile.batch_sizes.back()) +
                      " samples; train.batch_size = " + std::to_string(settings.batch_size) + " needs a new profile");
  }
  const std::size_t layers = stats.size();
  for (const sim::RankProfile& rank : profile.ranks) {
    if (rank.layers.size() != layers) {
      throw ConfigError("simulate: the profile's rank " + std::to_string(rank.rank) + " has " +
                        std::to_string(rank.layers.size()) + " layers, the model " + std::to_string(layers));
    }
  }
  sim::SimulationInput input;
  input.method = method.name;
  input.batch_size = settings.batch_size;
  input.rounds = settings.rounds;
  input.aggregate_every = settings.aggregate_every;
  input.server_streams = spec.server_streams;
  input.seed = settings.seed;
  input.sl_batches_per_turn = spec.sl_batches_per_turn;
  input.personalised = spec.personalised;
  input.host_cores = spec.host_cores;
  input.host_slice_ns = spec.host_slice_ns;
  // Each server stream has its share of the server's threads (at least one).
  const int server_threads = std::max(1, spec.server_threads / (method.server_replicas ? input.server_streams : 1));
  input.model_state_values = model::part_cost(stats, 0, layers, false).state_values;
  input.aggregate_s_per_parameter = profile.ranks.front().aggregate_s_per_parameter;
  const sim::RankProfile& server = profile.ranks.front();
  for (int d = 1; d <= devices; ++d) {
    const DevicePlanSpec& own = spec.devices[static_cast<std::size_t>(d - 1)];
    const std::size_t split = !method.splits_model ? layers : override.split.value_or(own.split);
    sim::SimulatedDevice device;
    device.micro_batches = !method.micro_batches ? 1 : override.micro_batches.value_or(own.micro_batches);
    device.samples = static_cast<std::int64_t>(samples[static_cast<std::size_t>(d - 1)]);
    device.batches = batches_per_round(samples[static_cast<std::size_t>(d - 1)], settings);
    if (device.samples < settings.batch_size) {  // the run's devices stop there (train::LocalBatches)
      throw ConfigError("simulate: device " + std::to_string(d) + " holds " + std::to_string(device.samples) +
                        " training samples, fewer than one mini-batch of " + std::to_string(settings.batch_size) +
                        " (train.batch_size), and the run would stop there; give the devices more data "
                        "(data.dataset = synthetic with data.synthetic_train >= devices x batch size) or "
                        "simulate fewer devices");
    }
    device.uplink = own.uplink;
    device.downlink = own.downlink;
    device.part = simulated_part(profile, rank_profile(profile, d), stats, 0, split, false, settings, own.slowdown,
                                 own.flops_per_second, spec.device_threads, settings.batch_size);
    device.activation_bytes_per_sample = split == 0 ? settings.model.input.elements() * 4
                                                    : stats[split - 1].activation_bytes_per_sample;
    device.part_state_values = model::part_cost(stats, 0, split, false).state_values;
    if (method.splits_model) {  // without gradients sent back the server part's input needs none
      // psl: the server part takes every device's mini-batch at once.
      const std::int64_t most =
          settings.batch_size * (method.serves_batches_together ? static_cast<std::int64_t>(spec.devices.size()) : 1);
      device.server = simulated_part(profile, server, stats, split, layers, method.sends_gradients, settings, 1.0,
                                     std::nullopt, server_threads, most);
    }
    if (method.device_tail) {  // ushaped: the server runs the middle, the device the tail and the loss
      const auto tail = static_cast<std::size_t>(spec.tail.value_or(static_cast<std::int64_t>(layers) - 1));
      device.server = simulated_part(profile, server, stats, split, tail, true, settings, 1.0, std::nullopt,
                                     server_threads, settings.batch_size);
      device.tail = simulated_part(profile, rank_profile(profile, d), stats, tail, layers, true, settings,
                                   own.slowdown, own.flops_per_second, spec.device_threads, settings.batch_size);
      device.middle_bytes_per_sample = tail == 0 ? settings.model.input.elements() * 4
                                                 : stats[tail - 1].activation_bytes_per_sample;
      device.tail_state_values = model::part_cost(stats, tail, layers, false).state_values;
    }
    input.devices.push_back(std::move(device));
  }
  if (method.local_phase) {
    add_adasplit(input, spec, spec.devices.front().split);
  } else if (method.splits_model && !method.sends_gradients) {
    add_local_loss(input, spec, spec.devices.front().split);
  }
  return input;
}

}  // namespace cmlbed::planner
