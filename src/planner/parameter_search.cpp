#include "cmlbed/planner/parameter_search.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <numeric>
#include <thread>

#include "cmlbed/base/fidelity_limits.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/methods.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/net/link.hpp"
#include "cmlbed/sim/round_bound.hpp"
#include "cmlbed/sim/schedule_simulator.hpp"
#include "cmlbed/train/local_training.hpp"
#include "cmlbed/train/round_report.hpp"
#include "cmlbed/planner/simulation_setup.hpp"

namespace cmlbed::planner {

using train::RoundMeasures;
using train::make_round_record;

namespace {

// The simulation inputs of plans: every device's stage lengths at one split are built
// once (they hold every sample count), and a plan takes each device's from its split.
// Safe to use from several threads.
class PlanInputs {
 public:
  PlanInputs(const PlanSpec& spec, const sim::Profile& profile, const std::vector<std::size_t>& samples,
             std::optional<std::int64_t> links_held_at_ns)
      : spec_(spec), profile_(profile), samples_(samples), links_held_at_ns_(links_held_at_ns) {}

  sim::SimulationInput of(const std::vector<DeviceChoice>& choices) {
    sim::SimulationInput input = at(choices.front().split);
    for (std::size_t d = 0; d < choices.size(); ++d) {
      if (choices[d].split != choices.front().split) input.devices[d] = at(choices[d].split).devices[d];
      input.devices[d].micro_batches = choices[d].micro_batches;
    }
    return input;
  }

  // sim::round_lower_bound_s of the plan `choices`, without building its input.
  double bound(const std::vector<DeviceChoice>& choices) {
    std::vector<sim::DeviceRoundWork> work;
    work.reserve(choices.size());
    for (std::size_t d = 0; d < choices.size(); ++d) {
      work.push_back(sim::device_round_work(at(choices[d].split).devices[d], spec_.training.batch_size,
                                             choices[d].micro_batches));
    }
    if (spec_.traits().serves_batches_together) {  // psl: one server part, every device's batch at once
      for (sim::DeviceRoundWork& device : work) device.server_s = 0;
      return std::max(sim::round_lower_bound_s(work, 1), sim::together_server_s(at(choices.front().split)));
    }
    return sim::round_lower_bound_s(work, sim::server_stream_count(at(choices.front().split)));
  }

 private:
  const sim::SimulationInput& at(std::size_t split) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto found = by_split_.find(split);
    if (found == by_split_.end()) {
      sim::SimulationInput input = simulation_input(spec_, profile_, samples_, {split, 1});
      if (links_held_at_ns_) {
        for (sim::SimulatedDevice& device : input.devices) {
          device.uplink = net::held_at(device.uplink, *links_held_at_ns_);
          device.downlink = net::held_at(device.downlink, *links_held_at_ns_);
        }
      }
      found = by_split_.emplace(split, std::move(input)).first;
    }
    return found->second;
  }

  const PlanSpec& spec_;
  const sim::Profile& profile_;
  const std::vector<std::size_t>& samples_;
  std::optional<std::int64_t> links_held_at_ns_;
  std::mutex mutex_;
  std::map<std::size_t, sim::SimulationInput> by_split_;  // entries never move or change once made
};

PlanCandidate predict(sim::SimulationInput input) {
  input.rounds = std::min(input.rounds, 2);
  input.transfer_events = false;  // the round's bytes are counted all the same
  const std::vector<sim::SimulatedRound> rounds = sim::simulate(input);
  const sim::SimulatedRound& round = rounds.back();
  RoundMeasures measures;
  measures.flops = round.flops;
  const trace::RoundRecord record = make_round_record(round.round, round.start_ns, round.end_ns, round.events, true, measures);
  PlanCandidate candidate;
  candidate.round_s = record.wall_s;
  candidate.server_idle = record.idle_s[0] / record.wall_s;
  double device_idle = 0;
  for (std::size_t r = 1; r < record.idle_s.size(); ++r) device_idle += record.idle_s[r] / record.wall_s;
  candidate.device_idle = device_idle / static_cast<double>(record.idle_s.size() - 1);
  candidate.bytes = round.bytes_up + round.bytes_down;
  for (std::size_t r = 1; r < round.held_ns.size(); ++r) {
    if (round.held_ns[r] > 0) {
      candidate.overrun_share = std::max(candidate.overrun_share, static_cast<double>(round.overrun_ns[r]) /
                                                                      static_cast<double>(round.held_ns[r]));
    }
  }
  return candidate;
}

// predict() of every plan, on as many threads as the machine has cores (the plans are
// independent simulations); in the plans' order, unlabelled (the caller knows each one's pair).
std::vector<PlanCandidate> predict_all(PlanInputs& inputs, const std::vector<std::vector<DeviceChoice>>& plans) {
  std::vector<PlanCandidate> predicted(plans.size());
  const std::size_t threads =
      std::max<std::size_t>(1, std::min<std::size_t>(std::thread::hardware_concurrency(), plans.size()));
  std::vector<std::exception_ptr> errors(threads);
  const auto work = [&](std::size_t first) {
    try {
      for (std::size_t i = first; i < plans.size(); i += threads) {
        predicted[i] = predict(inputs.of(plans[i]));
      }
    } catch (...) {
      errors[first] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& thread : pool) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return predicted;
}

// The PiPar authors' closed form for the number of micro-batches at split P (their
// node/server.py), with device 1's figures and sizes in bytes (not elements):
// N = ceil((T_up + T_server_fwd + T_server_bwd + T_down) / min(T_dev_fwd, T_dev_bwd)) + 1,
// at most batch / 2 and 100 (their rounding to a divisor-like value left out).
int closed_form_micro_batches(const sim::SimulationInput& input, std::int64_t batch) {
  const sim::SimulatedDevice& device = input.devices.front();
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

bool same_link(const net::LinkSpec& a, const net::LinkSpec& b) {
  const auto points = [](const net::LinkSpec& link) {
    std::vector<std::pair<double, double>> kept;
    if (link.trace) {
      for (const net::RatePoint& p : link.trace->points()) kept.emplace_back(p.t_seconds, p.bits_per_second);
    }
    return kept;
  };
  return a.rate_bits_per_second == b.rate_bits_per_second && a.burst_bytes == b.burst_bytes &&
         a.delay_ns == b.delay_ns && a.jitter_ns == b.jitter_ns && a.trace.has_value() == b.trace.has_value() &&
         points(a) == points(b);
}

// Whether devices d and e are planned as one (the rule of the per-device step, see
// parameter_search.hpp): the same links (their jitter's seed aside), speed, mini-batches
// per round and freedom.
bool alike(const PlanSpec& spec, const std::vector<std::size_t>& samples, const std::vector<DeviceFreedom>& freedom,
           std::size_t d, std::size_t e) {
  const DevicePlanSpec& a = spec.devices[d];
  const DevicePlanSpec& b = spec.devices[e];
  return same_link(a.uplink, b.uplink) && same_link(a.downlink, b.downlink) && a.slowdown == b.slowdown &&
         a.flops_per_second == b.flops_per_second &&
         train::batches_per_round(samples[d], spec.training) == train::batches_per_round(samples[e], spec.training) &&
         freedom[d].split == freedom[e].split && freedom[d].micro_batches == freedom[e].micro_batches;
}

// The devices (indices d-1) in classes of alike devices, each class in device order, the
// classes by their first device.
std::vector<std::vector<std::size_t>> device_classes(const PlanSpec& spec, const std::vector<std::size_t>& samples,
                                                     const std::vector<DeviceFreedom>& freedom) {
  std::vector<std::vector<std::size_t>> classes;
  for (std::size_t d = 0; d < samples.size(); ++d) {
    const auto own = std::find_if(classes.begin(), classes.end(), [&](const std::vector<std::size_t>& members) {
      return alike(spec, samples, freedom, members.front(), d);
    });
    if (own == classes.end()) {
      classes.push_back({d});
    } else {
      own->push_back(d);
    }
  }
  return classes;
}

// Step 1: `candidates` (labelled, one per plan of `grid`) get their bounds and are
// simulated a core's worth at a time, lowest bound first, until the next bound exceeds the
// best round (`skip`: that one and all after it are slower than the best) or none is left.
// One not simulated keeps NaN predictions and bytes -1. Returns how many were simulated.
std::size_t predict_lowest_bounds_first(PlanInputs& inputs, const std::vector<std::vector<DeviceChoice>>& grid,
                                        std::vector<PlanCandidate>& candidates, bool skip) {
  constexpr double kNotSimulated = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::size_t> by_bound(grid.size());
  for (std::size_t i = 0; i < grid.size(); ++i) {
    PlanCandidate& c = candidates[i];
    c.bound_s = inputs.bound(grid[i]);
    c.round_s = c.server_idle = c.device_idle = kNotSimulated;
    c.bytes = -1;
    by_bound[i] = i;
  }
  std::stable_sort(by_bound.begin(), by_bound.end(),
                   [&](std::size_t a, std::size_t b) { return candidates[a].bound_s < candidates[b].bound_s; });
  const std::size_t at_once = std::max(1u, std::thread::hardware_concurrency());
  double best_round_s = std::numeric_limits<double>::infinity();
  std::size_t next = 0;
  while (next < by_bound.size()) {
    std::vector<std::size_t> picked;
    while (picked.size() < at_once && next < by_bound.size() &&
           !(skip && candidates[by_bound[next]].bound_s > best_round_s)) {
      picked.push_back(by_bound[next++]);
    }
    if (picked.empty()) break;
    std::vector<std::vector<DeviceChoice>> plans;
    for (const std::size_t i : picked) plans.push_back(grid[i]);
    const std::vector<PlanCandidate> predicted = predict_all(inputs, plans);
    for (std::size_t k = 0; k < picked.size(); ++k) {
      PlanCandidate& c = candidates[picked[k]];
      const PlanCandidate labelled{c.split,         c.micro_batches,       predicted[k].round_s,
                                   predicted[k].server_idle, predicted[k].device_idle, predicted[k].bytes,
                                   c.bound_s,       predicted[k].overrun_share};
      c = labelled;
      // Only a plan that keeps pace may end the search: a slower one that keeps pace is
      // preferred to a faster one that does not.
      if (c.keeps_pace()) best_round_s = std::min(best_round_s, c.round_s);
    }
  }
  return next;  // every candidate taken was simulated
}

// The first of the best simulated candidates (better_plan), in their order: the choice
// simulating every candidate would make, since one not simulated is slower than the best
// that keeps pace.
std::size_t first_fastest(const std::vector<PlanCandidate>& candidates) {
  std::size_t best = candidates.size();
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const PlanCandidate& c = candidates[i];
    if (c.simulated() && (best == candidates.size() || better_plan(c, candidates[best]))) best = i;
  }
  return best;
}

}  // namespace

bool PlanCandidate::keeps_pace() const { return !(overrun_share > FidelityLimits{}.overrun_faithful); }

bool better_plan(const PlanCandidate& a, const PlanCandidate& b, double margin) {
  if (a.keeps_pace() != b.keeps_pace()) return a.keeps_pace();
  return a.round_s < b.round_s * (1 - margin);
}

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

PlanResult search_plan(const PlanSpec& spec, const sim::Profile& profile, const std::vector<std::size_t>& samples,
                       const std::vector<DeviceFreedom>& given_freedom, std::optional<std::int64_t> links_held_at_ns,
                       Search search) {
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
  // The smallest micro-batch: what every layer can train on, and what keeps the
  // mathematics (pipar.min_micro_batch); a mini-batch smaller than that is not cut.
  const std::int64_t smallest =
      std::min(batch, std::max(model::min_training_batch(spec.stats), spec.min_micro_batch));
  const std::vector<int> all_counts = micro_batch_candidates(batch, smallest);
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
  std::vector<std::vector<DeviceChoice>> grid;
  for (const std::size_t split : splits) {
    for (const int m : counts) grid.push_back(uniform(split, m));
  }
  const bool skip = search == Search::skip_by_bound;
  result.candidates.resize(grid.size());
  for (std::size_t i = 0; i < grid.size(); ++i) {  // the grid's pair, where device 1's own is kept
    result.candidates[i].split = splits[i / counts.size()];
    result.candidates[i].micro_batches = counts[i % counts.size()];
  }
  result.simulations += predict_lowest_bounds_first(inputs, grid, result.candidates, skip);
  result.skipped = grid.size() - result.simulations;
  result.best = first_fastest(result.candidates);
  const PlanCandidate& best = result.candidates[result.best];
  result.choices = uniform(best.split, best.micro_batches);
  result.chosen = best;  // already simulated; labelled, like every plan, with device 1's choice
  result.chosen.split = result.choices.front().split;
  result.chosen.micro_batches = result.choices.front().micro_batches;

  // Per-device choices need a server part per device (one server part takes one cut).
  // Alike devices are one class and take one choice.
  const std::vector<std::vector<std::size_t>> classes =
      method.server_replicas ? device_classes(spec, samples, freedom) : std::vector<std::vector<std::size_t>>{};
  result.device_classes = classes.size();
  if (classes.size() > 1) {
    for (int pass = 1; pass <= kMaxPasses; ++pass) {
      result.passes = pass;
      bool changed = false;
      for (const std::vector<std::size_t>& members : classes) {
        const DeviceFreedom& f = freedom[members.front()];
        if (!split_free(f) && !micro_free(f)) continue;
        std::vector<DeviceChoice> trial = result.choices;
        for (const std::size_t split : f.split ? std::vector<std::size_t>{*f.split} : all_splits) {
          for (const int m : f.micro_batches ? std::vector<int>{*f.micro_batches} : all_counts) {
            for (const std::size_t d : members) trial[d] = {split, m};
            if (trial[members.front()] == result.choices[members.front()]) continue;
            // Taken only if better, or as good and faster by 0.1%: never, when the plan
            // kept keeps pace and the trial's bound says it is slower.
            if (skip && result.chosen.keeps_pace() && inputs.bound(trial) >= result.chosen.round_s * (1 - 1e-3)) {
              ++result.skipped;
              continue;
            }
            const PlanCandidate candidate = predict_plan(trial);
            if (better_plan(candidate, result.chosen, 1e-3)) {
              for (const std::size_t d : members) result.choices[d] = trial[d];
              result.chosen = candidate;
              changed = true;
            }
          }
        }
      }
      if (!changed) break;
    }
  }

  const sim::SimulationInput at_best = inputs.of(uniform(best.split, 1));
  result.closed_form_micro_batches = method.micro_batches ? closed_form_micro_batches(at_best, batch) : 1;
  result.closed_form = predict_plan(uniform(best.split, result.closed_form_micro_batches));
  return result;
}

PlanCandidate predict_plan(const PlanSpec& spec, const sim::Profile& profile, const std::vector<std::size_t>& samples,
                           const std::vector<DeviceChoice>& plan, std::optional<std::int64_t> links_held_at_ns) {
  PlanCandidate candidate = predict(plan_input(spec, profile, samples, plan, links_held_at_ns));
  candidate.split = plan.front().split;
  candidate.micro_batches = plan.front().micro_batches;
  return candidate;
}

sim::SimulationInput plan_input(const PlanSpec& spec, const sim::Profile& profile,
                                 const std::vector<std::size_t>& samples, const std::vector<DeviceChoice>& plan,
                                 std::optional<std::int64_t> links_held_at_ns) {
  if (plan.size() != samples.size()) {
    throw std::invalid_argument("plan_input: a plan for " + std::to_string(plan.size()) + " devices, " +
                                std::to_string(samples.size()) + " devices with data");
  }
  return PlanInputs(spec, profile, samples, links_held_at_ns).of(plan);
}

}  // namespace cmlbed::planner
