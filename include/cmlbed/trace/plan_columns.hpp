#pragma once
// The columns of the results file's /plan and /plan/replans tables, described once:
// the writer stores each as the float64 dataset <table>/<name>, one entry per row,
// and readers (tests, scripts/cmlbed-report) find it under that name.
#include <vector>

#include "cmlbed/trace/results_file.hpp"

namespace cmlbed::trace {

template <typename Table>
struct Float64Column {
  const char* name;                     // the dataset's name in the table's group
  std::vector<double> Table::*values;  // the Table member that holds the column
};

using PlanColumn = Float64Column<ResultsFile::PlanTable>;
using ReplanColumn = Float64Column<ResultsFile::ReplanTable>;

// /plan: the uniform candidates (one entry each) and the per-device plan (index d-1).
// The choice and its predictions are attributes of /plan, not columns.
const std::vector<PlanColumn>& plan_columns();
// /plan/replans: one row per device and check; every column as long as `round`.
const std::vector<ReplanColumn>& replan_columns();

}  // namespace cmlbed::trace
