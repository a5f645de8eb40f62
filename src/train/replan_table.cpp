#include "cmlbed/train/replan_table.hpp"

#include <stdexcept>
#include <string>

namespace cmlbed::train {

const std::vector<ReplanColumn>& replan_columns() {
  using R = ReplanTable;
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

void write_replans(trace::ResultsFile& results, const ReplanTable& table) {
  for (const ReplanColumn& column : replan_columns()) {
    const std::size_t rows = (table.*column.values).size();
    if (rows != table.round.size()) {
      throw std::invalid_argument(std::string("write_replans: column ") + column.name + " has " +
                                  std::to_string(rows) + " rows, round has " + std::to_string(table.round.size()));
    }
  }
  results.write_float64_columns("/plan/replans", replan_columns(), table);
}

}  // namespace cmlbed::train
