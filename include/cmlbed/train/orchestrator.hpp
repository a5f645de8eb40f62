#pragma once
// AdaSplit's orchestrator: which devices train with the server in each iteration of the
// global phase. Plain C++ (no LibTorch), deterministic for a seed.
//
// ucb (discounted upper confidence bound): after T recorded iterations, device c scores
//   score_c = (sum_t g^(T-1-t) L_t[c] s_t[c]) / n_c + sqrt(2 ln T / n_c),
//   n_c = sum_t g^(T-1-t) s_t[c],
// where s_t[c] is 1 when c was selected at iteration t, L_t[c] its mean server
// cross-entropy then, and g the discount. High loss = more to learn = picked more;
// the second term favours devices picked seldom. Devices never picked (n_c = 0) score
// +infinity, so each is tried before any is picked twice. The `selected` best scores
// win; equal scores are ordered by a seeded draw.
// random: `selected` devices uniformly. all: every eligible device (the ablation
// without an orchestrator).
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace cmlbed::train {

enum class OrchestratorPolicy { ucb, random, all };
OrchestratorPolicy orchestrator_policy(const std::string& name);  // "ucb" | "random" | "all"

class Orchestrator {
 public:
  // Devices are 1..devices; `selected` >= 1 per iteration; 0 < discount <= 1.
  Orchestrator(OrchestratorPolicy policy, int devices, int selected, double discount,
               std::uint64_t seed);

  // The devices to train with in the next iteration, ascending, among `eligible` (the
  // devices that have a mini-batch at it); all of them when there are no more than
  // `selected`.
  std::vector<int> select(const std::vector<int>& eligible);

  // Ends an iteration: `losses` holds the mean server cross-entropy of each device
  // selected in it (the others count as not selected).
  void record(const std::map<int, double>& losses);

  // The ucb score of each device (index d - 1) after the iterations recorded so far.
  std::vector<double> scores() const;
  int iterations() const { return iterations_; }

  // Everything select() and record() depend on (sums, count, generator) as text, and
  // back: a checkpointed run picks the devices an uninterrupted one would.
  std::string save() const;
  void restore(const std::string& text);

 private:
  OrchestratorPolicy policy_;
  int selected_;
  double discount_;
  std::mt19937_64 random_;
  // Discounted sums, kept incrementally: each record() multiplies them by the discount
  // and adds the new iteration, so after T iterations they hold sum_t g^(T-1-t) x_t.
  std::vector<double> loss_sum_;
  std::vector<double> selection_sum_;
  int iterations_ = 0;
};

}  // namespace cmlbed::train
