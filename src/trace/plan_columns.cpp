#include "cmlbed/trace/plan_columns.hpp"

namespace cmlbed::trace {

// Both lists are in the order the datasets are created, which files keep.

const std::vector<PlanColumn>& plan_columns() {
  using P = ResultsFile::PlanTable;
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

const std::vector<ReplanColumn>& replan_columns() {
  using R = ResultsFile::ReplanTable;
  static const std::vector<ReplanColumn> columns = {
      {"round", &R::round},
      {"device", &R::device},
      {"uplink_bits_per_second", &R::uplink_bits_per_second},
      {"downlink_bits_per_second", &R::downlink_bits_per_second},
      {"split", &R::split},
      {"micro_batches", &R::micro_batches},
      {"predicted_round_s", &R::predicted_round_s},
      {"previous_plan_round_s", &R::previous_plan_round_s},
      {"changed", &R::changed},
  };
  return columns;
}

}  // namespace cmlbed::trace
