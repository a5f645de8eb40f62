// Reopening a results file to continue its run (`cmlbed run --resume`): the tables are
// cut back to what the checkpoint recorded and the marks of the run's end dropped.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cmlbed/trace/results_file.hpp"
#include "event_table.hpp"
#include "results_file_impl.hpp"

namespace cmlbed::trace {
namespace {

using hdf5::check;
using hdf5::check_bool;
using hdf5::DatasetHandle;
using hdf5::FileHandle;
using hdf5::GroupHandle;
using hdf5::owned;
using hdf5::quoted;

// Opens every rank's events table and cuts it to the rows `keep` names.
void reopen_event_tables(hid_t file, const RowCounts& keep, const std::string& where,
                         std::vector<DatasetHandle>& tables, std::vector<hsize_t>& rows) {
  for (std::size_t rank = 0; rank < keep.events.size(); ++rank) {
    const std::string name = events_dataset_name(static_cast<int>(rank));
    const std::string what = quoted(name) + " in " + where;
    tables.push_back(
        owned<DatasetHandle>(H5Dopen2(file, name.c_str(), H5P_DEFAULT), "H5Dopen2(" + what + ")"));
    hsize_t stored = hdf5::row_count(tables.back().get(), what);
    hdf5::truncate_table(tables.back().get(), stored, keep.events[rank], what);
    rows.push_back(stored);
  }
}

// The run goes on: what marked its end (or its stop) no longer holds. Returns /summary,
// emptied of its values.
GroupHandle drop_end_of_run(hid_t file, const std::string& where) {
  if (check_bool(H5Lexists(file, "/model", H5P_DEFAULT), "H5Lexists(/model)")) {
    check(H5Ldelete(file, "/model", H5P_DEFAULT), "H5Ldelete('/model' in " + where + ")");
  }
  hdf5::delete_attribute_if_present(file, "interrupted", where);
  hdf5::delete_attribute_if_present(file, "rounds_complete", where);
  auto summary =
      owned<GroupHandle>(H5Gopen2(file, "/summary", H5P_DEFAULT), "H5Gopen2('/summary' in " + where + ")");
  const std::string summary_where = "'/summary' in " + where;
  for (const std::string& name : hdf5::attribute_names(summary.get(), summary_where)) {
    hdf5::delete_attribute_if_present(summary.get(), name, summary_where);
  }
  return summary;
}

// Appends `resumed_after` to the root attribute resumed_after_rounds (created with the first).
void record_resumption(hid_t file, int resumed_after, const std::string& where) {
  std::vector<std::int32_t> resumed;
  if (hdf5::has_attribute(file, "resumed_after_rounds", where)) {
    resumed.resize(hdf5::attribute_elements(file, "resumed_after_rounds", where));
    hdf5::read_attribute(file, "resumed_after_rounds", H5T_NATIVE_INT32, resumed.data(), resumed.size(), where);
  }
  resumed.push_back(resumed_after);
  hdf5::write_attribute(file, "resumed_after_rounds", H5T_NATIVE_INT32, hdf5::vector_space(resumed.size()),
                        resumed.data(), where);
}

}  // namespace

ResultsFile ResultsFile::reopen(const std::string& path, const RowCounts& keep, int resumed_after,
                               const std::string& config_ini) {
  hdf5::silence_error_printing();
  const std::string where = quoted(path);
  const hdf5::PropertyListHandle access = make_file_access(path);
  FileHandle file = owned<FileHandle>(H5Fopen(path.c_str(), H5F_ACC_RDWR, access.get()),
                                      "H5Fopen(" + where + ", read-write)");
  std::int32_t mpi_size = 0;
  hdf5::read_attribute(file.get(), "mpi_size", H5T_NATIVE_INT32, &mpi_size, 1, where);
  if (mpi_size < 1 || keep.events.size() != static_cast<std::size_t>(mpi_size)) {
    throw std::invalid_argument(where + " has " + std::to_string(mpi_size) + " ranks; the checkpoint has " +
                                std::to_string(keep.events.size()));
  }
  auto impl = std::make_unique<Impl>(path, mpi_size);
  impl->file = std::move(file);
  const hid_t handle = impl->file.get();
  impl->event_memory_type = make_event_memory_type();
  reopen_event_tables(handle, keep, where, impl->events, impl->event_rows);
  const std::string rounds_what = "'/rounds' in " + where;
  impl->rounds = owned<DatasetHandle>(H5Dopen2(handle, "/rounds", H5P_DEFAULT), "H5Dopen2(" + rounds_what + ")");
  impl->round_rows = hdf5::row_count(impl->rounds.get(), rounds_what);
  hdf5::truncate_table(impl->rounds.get(), impl->round_rows, keep.rounds, rounds_what);
  impl->round_type = make_full_round_type(impl->round_layout);
  impl->summary = drop_end_of_run(handle, where);
  hdf5::write_string_attribute(handle, "config", config_ini, where);
  record_resumption(handle, resumed_after, where);
  check(H5Fflush(handle, H5F_SCOPE_GLOBAL), "H5Fflush(" + where + ", after reopening it)");
  return ResultsFile(std::move(impl));
}

}  // namespace cmlbed::trace
