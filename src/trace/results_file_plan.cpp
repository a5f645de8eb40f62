// /plan and /plan/replans: what the planner chose for `auto` options and the
// re-planner's checks (their columns: cmlbed/trace/plan_columns.hpp).
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "cmlbed/trace/plan_columns.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "results_file_impl.hpp"

namespace cmlbed::trace {
namespace {

// Each column of `table` as the float64 dataset <group>/<name>, replacing one there.
template <typename Table>
void replace_float64_columns(hid_t file, const std::string& group,
                             const std::vector<Float64Column<Table>>& columns, const Table& table,
                             const std::string& file_where) {
  for (const Float64Column<Table>& column : columns) {
    const std::string path = group + "/" + column.name;
    hdf5::replace_float64_dataset(file, path, table.*column.values,
                                  hdf5::quoted(path) + " in " + file_where);
  }
}

}  // namespace

void ResultsFile::write_plan(const PlanTable& plan) {
  Impl& impl = open_impl();
  const hid_t file = impl.file.get();
  const std::string where = "'/plan' in " + impl.where();
  const auto group = hdf5::owned<hdf5::GroupHandle>(
      H5Gcreate2(file, "/plan", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "H5Gcreate2(" + where + ")");
  replace_float64_columns(file, "/plan", plan_columns(), plan, impl.where());
  const std::pair<const char*, std::int32_t> integers[] = {
      {"chosen_split", plan.chosen_split},
      {"chosen_micro_batches", plan.chosen_micro_batches},
      {"closed_form_micro_batches", plan.closed_form_micro_batches},
      {"passes", plan.passes}};
  for (const auto& [name, value] : integers) {
    hdf5::write_attribute(group.get(), name, H5T_NATIVE_INT32, hdf5::scalar_space(), &value, where);
  }
  const std::pair<const char*, double> numbers[] = {
      {"predicted_round_s", plan.predicted_round_s},
      {"uniform_round_s", plan.uniform_round_s},
      {"closed_form_round_s", plan.closed_form_round_s}};
  for (const auto& [name, value] : numbers) {
    hdf5::write_attribute(group.get(), name, H5T_NATIVE_DOUBLE, hdf5::scalar_space(), &value, where);
  }
  hdf5::write_string_attribute(group.get(), "profile", plan.profile_json, where);
}

void ResultsFile::write_replans(const ReplanTable& table) {
  Impl& impl = open_impl();
  const hid_t file = impl.file.get();
  hdf5::ensure_group(file, "/plan", impl.where());
  hdf5::ensure_group(file, "/plan/replans", impl.where());
  for (const ReplanColumn& column : replan_columns()) {
    const std::size_t rows = (table.*column.values).size();
    if (rows != table.round.size()) {
      throw std::invalid_argument(std::string("write_replans: column ") + column.name + " has " +
                                  std::to_string(rows) + " rows, round has " +
                                  std::to_string(table.round.size()));
    }
  }
  replace_float64_columns(file, "/plan/replans", replan_columns(), table, impl.where());
}

}  // namespace cmlbed::trace
