#include "cmlbed/planning/parameter_search.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>
#include <numeric>

#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/methods.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/net/link.hpp"
#include "cmlbed/plan/schedule_simulator.hpp"
#include "cmlbed/train/local_training.hpp"
#include "cmlbed/train/round_report.hpp"
#include "cmlbed/planning/simulation_setup.hpp"

namespace cmlbed::planning {

using train::RoundMeasures;
using train::make_round_record;

namespace {

// The simulation inputs of plans: every device's stage lengths at one split are built
// once (they hold every sample count), and a plan takes each device's from its split.
class PlanInputs {
 public:
  PlanInputs(const PlanSpec& spec, const plan::Profile& profile, const std::vector<std::size_t>& samples,
             std::optional<std::int64_t> links_held_at_ns)
      : spec_(spec), profile_(profile), samples_(samples), links_held_at_ns_(links_held_at_ns) {}

  plan::SimulationInput of(const std::vector<DeviceChoice>& choices) {
    plan::SimulationInput input = at(choices.front().split);
    for (std::size_t d = 0; d < choices.size(); ++d) {
      if (choices[d].split != choices.front().split) input.devices[d] = at(choices[d].split).devices[d];
      input.devices[d].micro_batches = choices[d].micro_batches;
    }
    return input;
  }

 private:
  const plan::SimulationInput& at(std::size_t split) {
    auto found = by_split_.find(split);
    if (found == by_split_.end()) {
      plan::SimulationInput input = simulation_input(spec_, profile_, samples_, {split, 1});
      if (links_held_at_ns_) {
        for (plan::SimulatedDevice& device : input.devices) {
          device.uplink = net::held_at(device.uplink, *links_held_at_ns_);
          device.downlink = net::held_at(device.downlink, *links_held_at_ns_);
        }
      }
      found = by_split_.emplace(split, std::move(input)).first;
    }
    return found->second;
  }

  const PlanSpec& spec_;
  const plan::Profile& profile_;
  const std::vector<std::size_t>& samples_;
  std::optional<std::int64_t> links_held_at_ns_;
  std::map<std::size_t, plan::SimulationInput> by_split_;
};

PlanCandidate predict(plan::SimulationInput input) {
  input.rounds = std::min(input.rounds, 2);
  const std::vector<plan::SimulatedRound> rounds = plan::simulate(input);
  const plan::SimulatedRound& round = rounds.back();
  RoundMeasures measures;
  measures.flops = round.flops;
  const trace::RoundRecord record = make_round_record(round.round, round.start_ns, round.end_ns, round.events, true, measures);
  PlanCandidate candidate;
  candidate.round_s = record.wall_s;
  candidate.server_idle = record.idle_s[0] / record.wall_s;
  double device_idle = 0;
  for (std::size_t r = 1; r < record.idle_s.size(); ++r) device_idle += record.idle_s[r] / record.wall_s;
  candidate.device_idle = device_idle / static_cast<double>(record.idle_s.size() - 1);
  candidate.bytes = record.bytes_up + record.bytes_down;
  return candidate;
}

// The PiPar authors' closed form for the number of micro-batches at split P (their
// node/server.py), with device 1's figures and sizes in bytes (not elements):
// N = ceil((T_up + T_server_fwd + T_server_bwd + T_down) / min(T_dev_fwd, T_dev_bwd)) + 1,
// at most batch / 2 and 100 (their rounding to a divisor-like value left out).
int closed_form_micro_batches(const plan::SimulationInput& input, std::int64_t batch) {
  const plan::SimulatedDevice& device = input.devices.front();
  const auto n = static_cast<std::size_t>(batch);
  const auto transfer_s = [&](const net::LinkSpec& link, double bytes) {
    return link.rate_bits_per_second ? bytes * 8 / *link.rate_bits_per_second : 0.0;
  };
  const double activation = static_cast<double>(batch * device.activation_bytes_per_sample);
  const double communication_and_server = transfer_s(device.uplink, activation) + device.server.forward_s[n] +
                                          device.server.backward_s[n] + transfer_s(device.downlink, activation);
  const double device_stage = std::min(device.part.forward_s[n], device.part.backward_s[n]);
  if (device_stage <= 0) return 1;
  const double n_micro = std::ceil(communication_and_server / device_stage) + 1;
  return static_cast<int>(std::max(1.0, std::min({n_micro, static_cast<double>(batch / 2), 100.0})));
}

// Devices differ when one has its own settings or its own share of the data.
bool devices_differ(const PlanSpec& spec, const std::vector<std::size_t>& samples) {
  return spec.devices_set_apart ||
         std::adjacent_find(samples.begin(), samples.end(), std::not_equal_to<>()) != samples.end();
}

}  // namespace

std::vector<int> micro_batch_candidates(std::int64_t batch, std::int64_t smallest) {
  std::vector<int> counts;
  for (int m = 1; m <= std::min<std::int64_t>(batch, 8); ++m) counts.push_back(m);
  for (std::int64_t step = 8; step < batch;) {
    const std::int64_t half = step + step / 2;
    if (half < batch) counts.push_back(static_cast<int>(half));
    step *= 2;
    if (step <= batch) counts.push_back(static_cast<int>(step));
  }
  if (counts.back() != batch) counts.push_back(static_cast<int>(batch));
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  counts.erase(std::remove_if(counts.begin(), counts.end(), [&](int m) { return batch / m < smallest; }),
               counts.end());
  return counts;
}

PlanResult search_plan(const PlanSpec& spec, const plan::Profile& profile, const std::vector<std::size_t>& samples,
                       const std::vector<DeviceFreedom>& given_freedom, std::optional<std::int64_t> links_held_at_ns) {
  const MethodTraits& method = spec.traits();
  if (!method.plannable) {
    throw ConfigError("plan: experiment.method = " + method.name + " has no split point or micro-batches to choose (" +
                      method_list(&MethodTraits::plannable, "and") + " have)");
  }
  const std::size_t devices = samples.size();
  std::vector<DeviceFreedom> freedom = given_freedom.empty() ? std::vector<DeviceFreedom>(devices) : given_freedom;
  if (freedom.size() != devices) throw std::invalid_argument("search_plan: freedom for another device count");
  if (!method.micro_batches) {
    for (DeviceFreedom& f : freedom) f.micro_batches = 1;
  }
  const auto split_free = [](const DeviceFreedom& f) { return !f.split; };
  const auto micro_free = [](const DeviceFreedom& f) { return !f.micro_batches; };
  const std::size_t layers = spec.stats.size();
  const std::int64_t batch = spec.training.batch_size;
  const std::size_t min_split = spec.min_split;
  if (min_split > layers) {
    throw ConfigError("plan.min_split = " + std::to_string(min_split) + " is beyond the " + std::to_string(layers) +
                      " layers of " + spec.model_name + "; allowed: 0.." + std::to_string(layers));
  }
  std::vector<std::size_t> all_splits(layers + 1 - min_split);
  std::iota(all_splits.begin(), all_splits.end(), min_split);
  const std::vector<int> all_counts = micro_batch_candidates(batch, model::min_training_batch(spec.stats));
  // Step 1's grid: what some device may choose (else device 1's kept value, a label).
  const std::vector<std::size_t> splits = std::any_of(freedom.begin(), freedom.end(), split_free)
                                              ? all_splits
                                              : std::vector<std::size_t>{*freedom.front().split};
  const std::vector<int> counts = std::any_of(freedom.begin(), freedom.end(), micro_free)
                                      ? all_counts
                                      : std::vector<int>{*freedom.front().micro_batches};
  const auto uniform = [&](std::size_t split, int micro_batches) {
    std::vector<DeviceChoice> choices;
    for (const DeviceFreedom& f : freedom) choices.push_back({f.split.value_or(split), f.micro_batches.value_or(micro_batches)});
    return choices;
  };

  PlanInputs inputs(spec, profile, samples, links_held_at_ns);
  PlanResult result;
  const auto predict_plan = [&](const std::vector<DeviceChoice>& choices) {
    ++result.simulations;
    PlanCandidate candidate = predict(inputs.of(choices));
    candidate.split = choices.front().split;
    candidate.micro_batches = choices.front().micro_batches;
    return candidate;
  };
  for (const std::size_t split : splits) {
    for (const int m : counts) {
      result.candidates.push_back(predict_plan(uniform(split, m)));
      result.candidates.back().split = split;
      result.candidates.back().micro_batches = m;
    }
  }
  result.best = static_cast<std::size_t>(
      std::min_element(result.candidates.begin(), result.candidates.end(),
                       [](const PlanCandidate& a, const PlanCandidate& b) { return a.round_s < b.round_s; }) -
      result.candidates.begin());
  const PlanCandidate& best = result.candidates[result.best];
  result.choices = uniform(best.split, best.micro_batches);
  result.chosen = best;  // already simulated; labelled, like every plan, with device 1's choice
  result.chosen.split = result.choices.front().split;
  result.chosen.micro_batches = result.choices.front().micro_batches;

  // Per-device choices need a server part per device (one server part takes one cut).
  if (devices > 1 && method.server_replicas && devices_differ(spec, samples)) {
    for (int pass = 1; pass <= kMaxPasses; ++pass) {
      result.passes = pass;
      bool changed = false;
      for (std::size_t d = 0; d < devices; ++d) {
        const DeviceFreedom& f = freedom[d];
        if (!split_free(f) && !micro_free(f)) continue;
        std::vector<DeviceChoice> trial = result.choices;
        for (const std::size_t split : f.split ? std::vector<std::size_t>{*f.split} : all_splits) {
          for (const int m : f.micro_batches ? std::vector<int>{*f.micro_batches} : all_counts) {
            trial[d] = {split, m};
            if (trial[d] == result.choices[d]) continue;
            const PlanCandidate candidate = predict_plan(trial);
            if (candidate.round_s < result.chosen.round_s * (1 - 1e-3)) {
              result.choices[d] = trial[d];
              result.chosen = candidate;
              changed = true;
            }
          }
        }
      }
      if (!changed) break;
    }
  }

  const plan::SimulationInput at_best = inputs.of(uniform(best.split, 1));
  result.closed_form_micro_batches = method.micro_batches ? closed_form_micro_batches(at_best, batch) : 1;
  result.closed_form = predict_plan(uniform(best.split, result.closed_form_micro_batches));
  return result;
}

PlanCandidate predict_plan(const PlanSpec& spec, const plan::Profile& profile, const std::vector<std::size_t>& samples,
                           const std::vector<DeviceChoice>& plan, std::optional<std::int64_t> links_held_at_ns) {
  PlanCandidate candidate = predict(plan_input(spec, profile, samples, plan, links_held_at_ns));
  candidate.split = plan.front().split;
  candidate.micro_batches = plan.front().micro_batches;
  return candidate;
}

plan::SimulationInput plan_input(const PlanSpec& spec, const plan::Profile& profile,
                                 const std::vector<std::size_t>& samples, const std::vector<DeviceChoice>& plan,
                                 std::optional<std::int64_t> links_held_at_ns) {
  if (plan.size() != samples.size()) {
    throw std::invalid_argument("plan_input: a plan for " + std::to_string(plan.size()) + " devices, " +
                                std::to_string(samples.size()) + " devices with data");
  }
  return PlanInputs(spec, profile, samples, links_held_at_ns).of(plan);
}

}  // namespace cmlbed::planning
