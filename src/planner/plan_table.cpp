#include "cmlbed/planner/plan_table.hpp"

namespace cmlbed::planner {

namespace {
constexpr const char* kGroup = "/plan";
}  // namespace

const std::vector<PlanColumn>& plan_columns() {
  using P = PlanTable;
  static const std::vector<PlanColumn> columns = {
      {"split", &P::split},
      {"micro_batches", &P::micro_batches},
      {"round_s", &P::round_s},
      {"server_idle", &P::server_idle},
      {"device_idle", &P::device_idle},
      {"bytes", &P::bytes},
      {"round_bound_s", &P::round_bound_s},
      {"device_split", &P::device_split},
      {"device_micro_batches", &P::device_micro_batches},
  };
  return columns;
}

void write_plan(trace::ResultsFile& results, const PlanTable& plan) {
  results.write_float64_columns(kGroup, plan_columns(), plan);
  results.set_group_integer(kGroup, "chosen_split", plan.chosen_split);
  results.set_group_integer(kGroup, "chosen_micro_batches", plan.chosen_micro_batches);
  results.set_group_integer(kGroup, "closed_form_micro_batches", plan.closed_form_micro_batches);
  results.set_group_integer(kGroup, "passes", plan.passes);
  results.set_group_number(kGroup, "predicted_round_s", plan.predicted_round_s);
  results.set_group_number(kGroup, "uniform_round_s", plan.uniform_round_s);
  results.set_group_number(kGroup, "closed_form_round_s", plan.closed_form_round_s);
  results.set_group_text(kGroup, "profile", plan.profile_json);
}

}  // namespace cmlbed::planner
