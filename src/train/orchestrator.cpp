#include "cmlbed/train/orchestrator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "cmlbed/base/seed_streams.hpp"

namespace cmlbed::train {

OrchestratorPolicy orchestrator_policy(const std::string& name) {
  if (name == "ucb") return OrchestratorPolicy::ucb;
  if (name == "random") return OrchestratorPolicy::random;
  if (name == "all") return OrchestratorPolicy::all;
  throw std::invalid_argument("unknown orchestrator '" + name + "'; allowed: ucb, random, all");
}

Orchestrator::Orchestrator(OrchestratorPolicy policy, int devices, int selected, double discount,
                           std::uint64_t seed)
    : policy_(policy), selected_(selected), discount_(discount),
      random_(stream_seed(seed, "orchestrator")),
      loss_sum_(static_cast<std::size_t>(devices), 0.0),
      selection_sum_(static_cast<std::size_t>(devices), 0.0) {
  if (devices < 1 || selected < 1 || !(discount > 0 && discount <= 1)) {
    throw std::invalid_argument("orchestrator: needs devices >= 1, selected >= 1, 0 < discount <= 1");
  }
}

std::vector<double> Orchestrator::scores() const {
  std::vector<double> scores(loss_sum_.size());
  const double log_t = iterations_ > 0 ? std::log(static_cast<double>(iterations_)) : 0.0;
  for (std::size_t c = 0; c < scores.size(); ++c) {
    const double n = selection_sum_[c];
    scores[c] = n > 0 ? loss_sum_[c] / n + std::sqrt(2.0 * log_t / n)
                      : std::numeric_limits<double>::infinity();
  }
  return scores;
}

std::vector<int> Orchestrator::select(const std::vector<int>& eligible) {
  for (int device : eligible) {
    if (device < 1 || device > static_cast<int>(loss_sum_.size())) {
      throw std::out_of_range("orchestrator: no device " + std::to_string(device));
    }
  }
  const auto wanted = static_cast<std::size_t>(selected_);
  if (policy_ == OrchestratorPolicy::all || eligible.size() <= wanted) return eligible;
  // Each candidate gets a draw from the generator; random picks the smallest draws, ucb
  // the best scores with the draws ordering equal scores. Drawing for every candidate
  // every time keeps the generator's sequence independent of the scores.
  std::vector<std::pair<double, std::uint64_t>> keys;  // (score, draw) per candidate
  const std::vector<double> score = scores();
  for (int device : eligible) {
    const double s = policy_ == OrchestratorPolicy::ucb ? score[static_cast<std::size_t>(device - 1)] : 0.0;
    keys.emplace_back(s, random_());
  }
  std::vector<std::size_t> order(eligible.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (keys[a].first != keys[b].first) return keys[a].first > keys[b].first;
    return keys[a].second < keys[b].second;
  });
  std::vector<int> chosen;
  for (std::size_t i = 0; i < wanted; ++i) chosen.push_back(eligible[order[i]]);
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

void Orchestrator::record(const std::map<int, double>& losses) {
  for (std::size_t c = 0; c < loss_sum_.size(); ++c) {
    loss_sum_[c] *= discount_;
    selection_sum_[c] *= discount_;
  }
  for (const auto& [device, loss] : losses) {
    if (device < 1 || device > static_cast<int>(loss_sum_.size())) {
      throw std::out_of_range("orchestrator: no device " + std::to_string(device));
    }
    loss_sum_[static_cast<std::size_t>(device - 1)] += loss;
    selection_sum_[static_cast<std::size_t>(device - 1)] += 1.0;
  }
  ++iterations_;
}

std::string Orchestrator::save() const {
  std::ostringstream out;
  out.precision(17);  // enough digits for a double to read back exactly
  out << loss_sum_.size() << ' ' << iterations_;
  for (std::size_t c = 0; c < loss_sum_.size(); ++c) out << ' ' << loss_sum_[c] << ' ' << selection_sum_[c];
  out << ' ' << random_;
  return out.str();
}

void Orchestrator::restore(const std::string& text) {
  std::istringstream in(text);
  std::size_t devices = 0;
  in >> devices >> iterations_;
  if (!in || devices != loss_sum_.size()) {
    throw std::invalid_argument("orchestrator: saved state is for " + std::to_string(devices) + " devices, not " +
                                std::to_string(loss_sum_.size()));
  }
  for (std::size_t c = 0; c < devices; ++c) in >> loss_sum_[c] >> selection_sum_[c];
  in >> random_;
  if (!in) throw std::invalid_argument("orchestrator: unreadable saved state");
}

}  // namespace cmlbed::train
