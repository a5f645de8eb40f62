// The results file's life: checking that it can be created, creating it with its root
// attributes and empty tables, and flushing and closing it. What each part of the file
// holds is written and read in results_file_<part>.cpp.
#include "cmlbed/trace/results_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "event_table.hpp"
#include "results_file_impl.hpp"

namespace cmlbed::trace {
namespace {

using hdf5::check;
using hdf5::DatatypeHandle;
using hdf5::FileHandle;
using hdf5::GroupHandle;
using hdf5::owned;
using hdf5::PropertyListHandle;
using hdf5::quoted;
using hdf5::scalar_space;
using hdf5::vector_space;
using hdf5::write_attribute;
using hdf5::write_string_attribute;

void write_string_array_attribute(hid_t owner, const std::string& name,
                                  const std::vector<std::string>& values,
                                  const std::string& where) {
  const DatatypeHandle type = hdf5::make_string_type();
  std::vector<const char*> pointers;
  for (const std::string& value : values) pointers.push_back(value.c_str());
  write_attribute(owner, name, type.get(), vector_space(values.size()), pointers.data(), where);
}

void validate_run_info(const RunInfo& info) {
  if (info.mpi_size < 1) {
    throw std::invalid_argument("results file: mpi_size must be at least 1, got " +
                                std::to_string(info.mpi_size));
  }
  const auto expect_per_rank = [&](std::size_t size, const char* field) {
    if (size != static_cast<std::size_t>(info.mpi_size)) {
      throw std::invalid_argument(std::string("results file: ") + field + " has " +
                                  std::to_string(size) + " entries, expected one per rank (" +
                                  std::to_string(info.mpi_size) + ")");
    }
  };
  if (!info.hosts.empty()) expect_per_rank(info.hosts.size(), "hosts");  // none: a simulated run
  expect_per_rank(info.clock_offsets_ns.size(), "clock_offsets_ns");
  expect_per_rank(info.clock_uncertainty_ns.size(), "clock_uncertainty_ns");
  if (!info.expected_events.empty()) expect_per_rank(info.expected_events.size(), "expected_events");
}

// The root group keeps its attributes in dense storage: a per-rank attribute
// (clock_offsets_ns, hosts) outgrows the 64 KiB of an object header's compact storage
// beyond some 8,000 ranks (`cmlbed simulate --devices 10000`).
PropertyListHandle make_file_creation(const std::string& path) {
  auto creation = owned<PropertyListHandle>(H5Pcreate(H5P_FILE_CREATE),
                                            "H5Pcreate(file creation for " + quoted(path) + ")");
  check(H5Pset_attr_phase_change(creation.get(), 0, 0), "H5Pset_attr_phase_change(dense)");
  return creation;
}

void write_root_attributes(hid_t file, const RunInfo& info, const std::string& where) {
  write_string_attribute(file, "config", info.config_ini, where);
  write_string_attribute(file, "cmlbed_version", info.cmlbed_version, where);
  write_string_attribute(file, "git_revision", info.git_revision, where);
  write_string_attribute(file, "method", info.method, where);
  if (!info.method_table.empty()) write_string_attribute(file, "method_table", info.method_table, where);
  write_string_attribute(file, "started_at", info.started_at, where);
  write_string_attribute(file, "heap", info.heap, where);
  if (!info.model_file_sha256.empty()) {
    write_string_attribute(file, "model_file_sha256", info.model_file_sha256, where);
  }
  const std::int32_t mpi_size = info.mpi_size;
  write_attribute(file, "mpi_size", H5T_NATIVE_INT32, scalar_space(), &mpi_size, where);
  if (!info.hosts.empty()) write_string_array_attribute(file, "hosts", info.hosts, where);
  const hsize_t ranks = static_cast<hsize_t>(info.mpi_size);
  write_attribute(file, "clock_offsets_ns", H5T_NATIVE_INT64, vector_space(ranks),
                  info.clock_offsets_ns.data(), where);
  write_attribute(file, "clock_uncertainty_ns", H5T_NATIVE_INT64, vector_space(ranks),
                  info.clock_uncertainty_ns.data(), where);
}

}  // namespace

// Without evictions the metadata cache writes nothing between flushes. Otherwise it
// may write some of the metadata of an unflushed append (say, a dataset's new extent
// but not the index of its new chunk) when it needs room, and a process killed then
// leaves a file whose last table is inconsistent (with a small cache, a killed writer's
// file can show an unflushed round's events). The results file's metadata is
// a few object headers and chunk indexes, so keeping all of it in memory is cheap.
// Adaptive resizing must be off for evictions to be disabled.
// The latest file format (H5Pset_libver_bounds, needed for SWMR) is not used: its
// superblock records "open for writing", and after a kill HDF5 1.10 refuses to open
// the file until `h5clear -s` is run on it.
PropertyListHandle make_file_access(const std::string& path) {
  auto access = owned<PropertyListHandle>(H5Pcreate(H5P_FILE_ACCESS),
                                          "H5Pcreate(file access for " + quoted(path) + ")");
  H5AC_cache_config_t cache{};
  cache.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  check(H5Pget_mdc_config(access.get(), &cache), "H5Pget_mdc_config");
  cache.incr_mode = H5C_incr__off;
  cache.flash_incr_mode = H5C_flash_incr__off;
  cache.decr_mode = H5C_decr__off;
  cache.evictions_enabled = false;
  check(H5Pset_mdc_config(access.get(), &cache), "H5Pset_mdc_config(evictions off)");
  // HDF5 1.8's format or later: attributes may then be stored densely (see
  // make_file_creation), readable by every HDF5 since 1.8.
  check(H5Pset_libver_bounds(access.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST), "H5Pset_libver_bounds(1.8, latest)");
  return access;
}

void ResultsFile::check_can_create(const std::string& path, bool overwrite) {
  namespace fs = std::filesystem;
  const std::string name = "output.file " + quoted(path);
  if (path.empty()) {
    throw std::invalid_argument("output.file is empty; set it to the results file to write");
  }
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (fs::exists(status)) {
    if (fs::is_directory(status)) {
      throw std::invalid_argument(name + " is a directory; choose a file name");
    }
    if (!overwrite) {
      throw std::invalid_argument(
          name + " exists; set --output.overwrite=true or choose another output.file");
    }
    if (::access(path.c_str(), W_OK) != 0) {
      throw std::invalid_argument(name +
                                  " exists and cannot be overwritten: " + std::strerror(errno));
    }
    return;
  }
  if (fs::is_symlink(fs::symlink_status(path, error))) {
    throw std::invalid_argument(name + " is a symbolic link to nothing; choose another file");
  }
  // Missing directories are created with the file (results/<group>/run.h5 just works):
  // what must exist, and be a writable directory, is the nearest existing ancestor.
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) parent = ".";
  while (!fs::exists(fs::status(parent, error)) && parent.has_parent_path() &&
         parent.parent_path() != parent) {
    parent = parent.parent_path();
  }
  const fs::file_status parent_status = fs::status(parent, error);
  if (!fs::is_directory(parent_status)) {
    throw std::invalid_argument(name + ": " + quoted(parent.string()) + " is not a directory");
  }
  if (::access(parent.c_str(), W_OK | X_OK) != 0) {
    throw std::invalid_argument(name + ": cannot create files in directory " +
                                quoted(parent.string()) + ": " + std::strerror(errno));
  }
}

namespace {

// /ranks/<r>/events for every rank, each chunked by the rows it is expected to hold
// (RunInfo::expected_events), at most kEventChunkRows.
void create_event_tables(hid_t file, const RunInfo& info, const std::string& where,
                         std::vector<hdf5::DatasetHandle>& tables, std::vector<hsize_t>& rows) {
  const DatatypeHandle event_file_type = make_event_file_type();
  const auto ranks_group =
      owned<GroupHandle>(H5Gcreate2(file, "/ranks", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                         "H5Gcreate2('/ranks' in " + where + ")");
  for (int rank = 0; rank < info.mpi_size; ++rank) {
    const std::string group_name = rank_group_name(rank);
    const auto group = owned<GroupHandle>(
        H5Gcreate2(file, group_name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        "H5Gcreate2(" + quoted(group_name) + " in " + where + ")");
    hsize_t chunk_rows = kEventChunkRows;
    if (!info.expected_events.empty()) {
      const std::int64_t expected = info.expected_events[static_cast<std::size_t>(rank)];
      chunk_rows = std::clamp<hsize_t>(static_cast<hsize_t>(std::max<std::int64_t>(expected, 1)), 1, kEventChunkRows);
    }
    tables.push_back(hdf5::create_table(group.get(), "events", event_file_type.get(), chunk_rows, where));
    rows.push_back(0);
  }
}

}  // namespace

ResultsFile::ResultsFile(const std::string& path, bool overwrite, const RunInfo& info) {
  validate_run_info(info);
  hdf5::silence_error_printing();
  auto impl = std::make_unique<Impl>(path, info.mpi_size);
  const std::string where = impl->where();

  const std::filesystem::path directory = std::filesystem::path(path).parent_path();
  std::error_code error;
  if (!directory.empty() && !std::filesystem::create_directories(directory, error) && error) {
    throw std::runtime_error("cannot create directory " + quoted(directory.string()) +
                             " for the results file: " + error.message());
  }
  const PropertyListHandle access = make_file_access(path);
  const PropertyListHandle creation = make_file_creation(path);
  impl->file = owned<FileHandle>(
      H5Fcreate(path.c_str(), overwrite ? H5F_ACC_TRUNC : H5F_ACC_EXCL, creation.get(), access.get()),
      "H5Fcreate(" + where + (overwrite ? ", truncate)" : ", exclusive)"));
  const hid_t file = impl->file.get();
  write_root_attributes(file, info, where);

  impl->event_detail = info.event_detail;
  write_string_attribute(file, "event_detail", info.event_detail == EventDetail::all ? "all" : "totals", where);
  if (info.event_detail == EventDetail::totals) {
    impl->event_totals = create_event_totals_table(file, where);
  } else {
    impl->event_memory_type = make_event_memory_type();
    create_event_tables(file, info, where, impl->events, impl->event_rows);
  }

  impl->round_type = make_full_round_type(impl->round_layout);
  const hsize_t round_chunk_rows = std::max<hsize_t>(1, kRoundChunkBytes / impl->round_layout.size);
  impl->rounds = hdf5::create_table(file, "rounds", impl->round_type.get(), round_chunk_rows, where);
  impl->summary =
      owned<GroupHandle>(H5Gcreate2(file, "/summary", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                         "H5Gcreate2('/summary' in " + where + ")");
  // On disk at once: a run that dies before its first round leaves a readable file with
  // its metadata and zero rounds (without this, 96 bytes h5py cannot open).
  check(H5Fflush(file, H5F_SCOPE_GLOBAL), "H5Fflush(" + where + ", after creating it)");
  impl_ = std::move(impl);
}

ResultsFile::ResultsFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ResultsFile::~ResultsFile() = default;
ResultsFile::ResultsFile(ResultsFile&&) noexcept = default;
ResultsFile& ResultsFile::operator=(ResultsFile&&) noexcept = default;

// Every method that touches the file starts here, so HDF5's printing of error stacks
// is off on the calling thread before its first HDF5 call (cheap after the first).
ResultsFile::Impl& ResultsFile::open_impl() const {
  if (!impl_) throw std::logic_error("results file used after close() or a move");
  hdf5::silence_error_printing();
  return *impl_;
}

const std::string& ResultsFile::path() const { return open_impl().path; }
int ResultsFile::mpi_size() const { return open_impl().mpi_size; }

RowCounts ResultsFile::row_counts() const {
  const Impl& impl = open_impl();
  RowCounts counts;
  counts.rounds = impl.round_rows;
  counts.events.assign(impl.event_rows.begin(), impl.event_rows.end());
  return counts;
}

void ResultsFile::flush() {
  Impl& impl = open_impl();
  check(H5Fflush(impl.file.get(), H5F_SCOPE_GLOBAL), "H5Fflush(" + impl.where() + ")");
}

void ResultsFile::close() {
  Impl& impl = open_impl();
  const std::string where = impl.where();
  impl.summary.close("H5Gclose('/summary' in " + where + ")");
  for (hdf5::DatasetHandle& events : impl.events) events.close("H5Dclose(events in " + where + ")");
  impl.event_totals.close("H5Dclose('/event_totals' in " + where + ")");
  impl.rounds.close("H5Dclose('/rounds' in " + where + ")");
  for (auto& [name, table] : impl.row_tables) table.dataset.close("H5Dclose('/" + name + "' in " + where + ")");
  impl.file.close("H5Fclose(" + where + ")");
  impl_.reset();
}

}  // namespace cmlbed::trace
