#pragma once
// What the planner chose for `auto` options, as the results file keeps it
// (docs/reference/results-format.md, "/plan"): the candidate table as float64 datasets of
// one entry per candidate, the choice and its predicted round time as attributes of
// /plan, and the profile it planned from (JSON text). The planner declares its table;
// trace writes columns and attributes.
#include <string>
#include <vector>

#include "cmlbed/trace/results_file.hpp"

namespace cmlbed::planner {

struct PlanTable {
  // Uniform candidates; one not simulated (its bound exceeded the best round) has NaN
  // round_s, server_idle, device_idle and bytes.
  std::vector<double> split, micro_batches, round_s, server_idle, device_idle, bytes, round_bound_s;
  int chosen_split = 0, chosen_micro_batches = 0;  // the best uniform pair
  double uniform_round_s = 0;                      // its prediction
  std::vector<double> device_split, device_micro_batches;  // the plan, per device (index d-1)
  int passes = 0;                                  // per-device refinement passes (0: devices alike)
  double predicted_round_s = 0;                    // the plan's prediction
  int closed_form_micro_batches = 0;
  double closed_form_round_s = 0;
  std::string profile_json;
};

// /plan's columns, in the order the datasets are created (which files keep): the
// uniform candidates (one entry each) and the per-device plan (index d-1).
using PlanColumn = trace::MemberColumn<PlanTable>;
const std::vector<PlanColumn>& plan_columns();

void write_plan(trace::ResultsFile& results, const PlanTable& plan);

}  // namespace cmlbed::planner
