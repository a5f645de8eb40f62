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
  std::vector<trace::ResultsFile::Float64Column> columns;
  for (const ReplanColumn& column : replan_columns()) {
    const std::vector<double>& values = table.*column.values;
    if (values.size() != table.round.size()) {
      throw std::invalid_argument(std::string("write_replans: column ") + column.name + " has " +
                                  std::to_string(values.size()) + " rows, round has " +
                                  std::to_string(table.round.size()));
    }
    columns.push_back({column.name, &values});
  }
  results.write_float64_columns("/plan/replans", columns);
}

}  // namespace cmlbed::train
