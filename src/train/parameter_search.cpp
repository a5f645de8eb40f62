#include "cmlbed/train/parameter_search.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "cmlbed/config/config_error.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/plan/schedule_simulator.hpp"
#include "cmlbed/train/local_training.hpp"
#include "cmlbed/train/round_report.hpp"
#include "cmlbed/train/simulation_setup.hpp"

namespace cmlbed::train {
namespace {

// `at_split`: the simulation input at the candidate's split (any micro-batch count);
// built once per split, since it holds every device's stage lengths at every size.
PlanCandidate predict(plan::SimulationInput input, std::size_t split, int micro_batches) {
  for (plan::SimulatedDevice& device : input.devices) device.micro_batches = micro_batches;
  input.rounds = std::min(input.rounds, 2);
  const std::vector<plan::SimulatedRound> rounds = plan::simulate(input);
  const plan::SimulatedRound& round = rounds.back();
  RoundMeasures measures;
  measures.flops = round.flops;
  const trace::RoundRecord record = make_round_record(round.round, round.start_ns, round.end_ns, round.events, true, measures);
  PlanCandidate candidate;
  candidate.split = split;
  candidate.micro_batches = micro_batches;
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

}  // namespace

std::vector<int> micro_batch_candidates(std::int64_t batch) {
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
  return counts;
}

PlanResult search_plan(const Config& config, const plan::Profile& profile, const std::vector<std::size_t>& samples,
                       const PlanOverride& fixed) {
  const std::string method = config.text("experiment.method");
  if (method != "sfl" && method != "pipar") {
    throw ConfigError("plan: experiment.method = " + method +
                      " has no split point or micro-batches to choose (sfl and pipar have)");
  }
  const std::size_t layers = model::layer_stats(training_settings(config).model).size();
  const std::int64_t batch = config.integer("train.batch_size");
  const std::vector<int> counts = method != "pipar"      ? std::vector<int>{1}
                                  : fixed.micro_batches ? std::vector<int>{*fixed.micro_batches}
                                                        : micro_batch_candidates(batch);
  std::vector<std::size_t> splits;
  for (std::size_t split = 0; split <= layers; ++split) {
    if (!fixed.split || *fixed.split == split) splits.push_back(split);
  }
  PlanResult result;
  std::vector<plan::SimulationInput> inputs;  // index as `splits`
  for (const std::size_t split : splits) {
    inputs.push_back(simulation_input(config, profile, samples, {split, 1}));
    for (const int m : counts) result.candidates.push_back(predict(inputs.back(), split, m));
  }
  result.best = static_cast<std::size_t>(
      std::min_element(result.candidates.begin(), result.candidates.end(),
                       [](const PlanCandidate& a, const PlanCandidate& b) { return a.round_s < b.round_s; }) -
      result.candidates.begin());
  const std::size_t split = result.candidates[result.best].split;
  const plan::SimulationInput& at_best =
      inputs[static_cast<std::size_t>(std::find(splits.begin(), splits.end(), split) - splits.begin())];
  result.closed_form_micro_batches = method == "pipar" ? closed_form_micro_batches(at_best, batch) : 1;
  result.closed_form = predict(at_best, split, result.closed_form_micro_batches);
  return result;
}

}  // namespace cmlbed::train
