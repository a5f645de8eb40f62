#pragma once
// Automated parameter selection (PiPar's APS, done by simulation): every split point P
// and micro-batch count m worth trying, each simulated with all devices together (they
// share the server) by the schedule simulator; the pair with the lowest predicted round
// time wins. Beside it, what the PiPar authors' closed form picks for m.
#include <cstdint>
#include <vector>

#include "cmlbed/config/config.hpp"
#include "cmlbed/plan/profile.hpp"
#include "cmlbed/train/simulation_setup.hpp"

namespace cmlbed::train {

struct PlanCandidate {
  std::size_t split = 0;
  int micro_batches = 1;
  double round_s = 0;       // predicted wall time of a round (see search_plan)
  double server_idle = 0;   // fraction of it
  double device_idle = 0;   // mean over devices
  std::int64_t bytes = 0;   // up + down in the round
};

struct PlanResult {
  std::vector<PlanCandidate> candidates;  // by split, then micro-batches
  std::size_t best = 0;                   // index into candidates
  int closed_form_micro_batches = 1;      // the authors' N at the best split
  PlanCandidate closed_form;              // our prediction for (best split, that N)
};

// The micro-batch counts tried for mini-batches of `batch`: 1..8, then 12, 16, 24, 32,
// 48, 64, ... (1.5x and 2x steps) up to `batch`; counts above 8 differ by little.
std::vector<int> micro_batch_candidates(std::int64_t batch);

// Splits 0..L (L = the model's layers; sfl: m = 1; pipar: every candidate m). A
// candidate's round time is the wall time of the simulated second round (the first
// starts with full token buckets), or of the first when the run has one round. Throws
// ConfigError for a method with nothing to choose (fl, sl, adasplit, transfer).
// `fixed` holds what is not to be chosen (an explicit split or micro-batch count).
PlanResult search_plan(const Config& config, const plan::Profile& profile, const std::vector<std::size_t>& samples,
                       const PlanOverride& fixed = {});

}  // namespace cmlbed::train
