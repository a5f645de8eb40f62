#pragma once
// Automated parameter selection (PiPar's APS, done by simulation). Two steps, each
// candidate simulated with all devices together (they share the server):
//  1. uniform: every split point P and micro-batch count m worth trying, the same for
//     every device the planner may choose for (the candidate table);
//  2. per class of alike devices, when there are several classes: from the best uniform
//     pair, each class in turn tries every (P, m) for all of its devices with the others'
//     kept, and takes the best if it shortens the predicted round by more than 0.1%;
//     passes repeat until none changes (at most kMaxPasses). Alike devices (one class)
//     have the same links (rate, burst, delay, jitter, trace), the same speed
//     (devices.slowdown, devices.flops), as many mini-batches per round and the same
//     freedom (what the planner may choose for them): they are planned once and share
//     the choice, so 1,000 devices of three kinds cost three devices' refinement. (Their
//     shares of the data may differ: a share weighs a device's model in the averaging,
//     it does not lengthen its round.)
//     One device's choice moves the others' best (they share the server), so this is a
//     coordinate descent: it ends at a plan no single device can improve, not
//     necessarily the best of all N-device combinations (which is exponential in N).
// Beside it, what the PiPar authors' closed form picks for m.
#include <cstdint>
#include <optional>
#include <vector>

#include "cmlbed/sim/profile.hpp"
#include "cmlbed/train/device_choice.hpp"
#include "cmlbed/planner/simulation_setup.hpp"

namespace cmlbed::planner {

using train::DeviceChoice;

struct PlanCandidate {
  std::size_t split = 0;
  int micro_batches = 1;
  double round_s = 0;       // predicted wall time of a round (see search_plan); NaN: not simulated
  double server_idle = 0;   // fraction of it (NaN: not simulated)
  double device_idle = 0;   // mean over devices (NaN: not simulated)
  std::int64_t bytes = 0;   // up + down in the round (-1: not simulated)
  double bound_s = 0;       // a lower bound of round_s (sim::round_lower_bound_s)
  // The worst device's predicted overrun of its held stages / their held length (0: none
  // held or none overran; NaN: not simulated): whether this host can keep the plan's pace.
  double overrun_share = 0;
  bool simulated() const { return bytes >= 0; }
  // Predicted to keep the devices' pace within a faithful emulation's limit
  // (docs/explanation/fidelity.md): the planner prefers such plans to faster ones.
  bool keeps_pace() const;
};

// Whether `a` is a better plan than `b`: one that keeps pace over one that does not, else
// the faster by more than `margin` (relative).
bool better_plan(const PlanCandidate& a, const PlanCandidate& b, double margin = 0);

// What the planner may choose for one device: nullopt = choose it, a value = keep it.
struct DeviceFreedom {
  std::optional<std::size_t> split;
  std::optional<int> micro_batches;
};

struct PlanResult {
  std::vector<PlanCandidate> candidates;  // step 1, by split, then micro-batches
  std::size_t best = 0;                   // index into candidates
  std::vector<DeviceChoice> choices;      // the plan, per device (index d-1)
  PlanCandidate chosen;                   // its prediction (split, micro_batches: device 1's)
  int passes = 0;                         // step 2's passes (0: devices alike, not refined)
  std::size_t device_classes = 0;         // classes of alike devices (0: one server part, no step 2)
  std::size_t simulations = 0;            // candidates simulated in all
  std::size_t skipped = 0;                // candidates not simulated: their bound exceeded the best round
  int closed_form_micro_batches = 1;      // the authors' N at the best uniform split
  PlanCandidate closed_form;              // our prediction for (best uniform split, that N)
};

constexpr int kMaxPasses = 3;

// The micro-batch counts tried for mini-batches of `batch`: 1..8, then 12, 16, 24, 32,
// 48, 64, ... (1.5x and 2x steps) up to `batch`; counts above 8 differ by little. Only
// counts whose smallest micro-batch holds `smallest` samples (the model's
// min_training_batch).
std::vector<int> micro_batch_candidates(std::int64_t batch, std::int64_t smallest = 1);

// Splits plan.min_split..L (L = the model's layers; sfl: m = 1; pipar: every candidate m). A
// candidate's round time is the wall time of the simulated second round (the first
// starts with full token buckets), or of the first when the run has one round. Throws
// ConfigError for a method with nothing to choose (fl, sl, adasplit, transfer).
// `freedom` (index d-1; empty: choose everything for every device) says what is kept.
// `links_held_at_ns`, when given, plans for every link's rate at that time since the links
// started, held from then on (net::held_at; plan.replan), instead of simulating the rate
// traces from the start.
// Candidates are simulated in the order of their lower bounds (sim/round_bound.hpp); one
// whose bound exceeds the best round simulated so far cannot be chosen and is skipped
// (Search::every_candidate simulates them all: the same choice, every row predicted).
enum class Search { skip_by_bound, every_candidate };
PlanResult search_plan(const PlanSpec& spec, const sim::Profile& profile, const std::vector<std::size_t>& samples,
                       const std::vector<DeviceFreedom>& freedom = {},
                       std::optional<std::int64_t> links_held_at_ns = std::nullopt,
                       Search search = Search::skip_by_bound);

// The prediction of one plan (per device, index d-1), as search_plan makes it.
PlanCandidate predict_plan(const PlanSpec& spec, const sim::Profile& profile, const std::vector<std::size_t>& samples,
                           const std::vector<DeviceChoice>& plan,
                           std::optional<std::int64_t> links_held_at_ns = std::nullopt);

// The simulation input of one plan (per device, index d-1), as predict_plan simulates it
// (without links_held_at_ns: every rate trace as given, as `cmlbed simulate` runs a plan
// adopted between rounds, sim::PlanPhase).
sim::SimulationInput plan_input(const PlanSpec& spec, const sim::Profile& profile,
                                 const std::vector<std::size_t>& samples, const std::vector<DeviceChoice>& plan,
                                 std::optional<std::int64_t> links_held_at_ns = std::nullopt);

}  // namespace cmlbed::planner
