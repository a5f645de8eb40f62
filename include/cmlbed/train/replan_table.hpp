#pragma once
// The re-planner's checks (plan.replan; docs/reference/results-format.md,
// "/plan/replans"): one row per device and check, as float64 datasets
// /plan/replans/<column>, replaced on every write (the table so far). It sits in train
// beside PlanChanges, the question whose answers it records; trace writes the columns.
#include <vector>

#include "cmlbed/trace/results_file.hpp"

namespace cmlbed::train {

struct ReplanTable {
  std::vector<double> round;       // the check followed this round (0-based, as /rounds)
  std::vector<double> device;      // 1..devices
  std::vector<double> uplink_bits_per_second, downlink_bits_per_second;  // the rates then (NaN: unshaped)
  std::vector<double> split, micro_batches;  // the plan for the rounds after it
  std::vector<double> predicted_round_s;     // that plan's predicted round at these rates
  std::vector<double> previous_plan_round_s;  // the plan in force before, predicted at these rates
  std::vector<double> changed;                // 1: the plan changed (for any device), 0: kept
};

// /plan/replans' columns, in the order the datasets are created; every one as long as
// `round`.
using ReplanColumn = trace::MemberColumn<ReplanTable>;
const std::vector<ReplanColumn>& replan_columns();

// std::invalid_argument when a column is not as long as `round`.
void write_replans(trace::ResultsFile& results, const ReplanTable& table);

}  // namespace cmlbed::train
