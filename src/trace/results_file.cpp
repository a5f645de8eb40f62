#include "cmlbed/trace/results_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <system_error>
#include <type_traits>
#include <variant>

#include "cmlbed/trace/hdf5_handles.hpp"
#include "cmlbed/trace/round_columns.hpp"

namespace cmlbed::trace {
namespace {

using hdf5::AttributeHandle;
using hdf5::check;
using hdf5::check_bool;
using hdf5::DatasetHandle;
using hdf5::DataspaceHandle;
using hdf5::DatatypeHandle;
using hdf5::FileHandle;
using hdf5::GroupHandle;
using hdf5::make_string_type;
using hdf5::owned;
using hdf5::PropertyListHandle;
using hdf5::scalar_space;
using hdf5::vector_space;
using hdf5::write_attribute;
using hdf5::write_string_attribute;

// 4096 packed events are 168 KiB: well inside HDF5's default 1 MiB chunk cache, and
// few chunks even for long runs.
constexpr hsize_t kEventChunkRows = 4096;
// A rounds row grows with mpi_size (four float64 arrays); chunks of about 64 KiB.
constexpr std::size_t kRoundChunkBytes = 64 * 1024;

std::string quoted(const std::string& text) { return "'" + text + "'"; }

// --- Row types -----------------------------------------------------------------------
// The memory types describe the C++ rows; HDF5 converts to and from the file types by
// member name, so readers and writers agree as long as the names do.

static_assert(sizeof(Lane) == 1 && sizeof(EventKind) == 1 && sizeof(MessageType) == 1,
              "lane, kind and message are stored as HDF5 enums based on uint8");

// An enum over uint8 whose member names are `names` in value order, so that h5py and
// h5dump show "forward" rather than 0.
DatatypeHandle make_enum_type(const char* what, const std::vector<std::string>& names) {
  auto type = owned<DatatypeHandle>(H5Tenum_create(H5T_NATIVE_UINT8),
                                    std::string("H5Tenum_create(") + what + ")");
  for (std::size_t value = 0; value < names.size(); ++value) {
    const auto stored = static_cast<std::uint8_t>(value);
    check(H5Tenum_insert(type.get(), names[value].c_str(), &stored),
          std::string("H5Tenum_insert(") + what + ", " + quoted(names[value]) + ")");
  }
  return type;
}

void insert_member(hid_t compound, const char* name, std::size_t offset, hid_t type) {
  check(H5Tinsert(compound, name, offset, type), std::string("H5Tinsert(") + name + ")");
}

// The layout of trace::Event in memory, padding included.
DatatypeHandle make_event_memory_type() {
  const DatatypeHandle lane = make_enum_type("lane", lane_names());
  const DatatypeHandle kind = make_enum_type("kind", event_kind_names());
  const DatatypeHandle message = make_enum_type("message", message_type_names());
  auto type =
      owned<DatatypeHandle>(H5Tcreate(H5T_COMPOUND, sizeof(Event)), "H5Tcreate(event compound)");
  const hid_t row = type.get();
  insert_member(row, "round", offsetof(Event, round), H5T_NATIVE_INT32);
  insert_member(row, "batch", offsetof(Event, batch), H5T_NATIVE_INT32);
  insert_member(row, "micro_batch", offsetof(Event, micro_batch), H5T_NATIVE_INT32);
  insert_member(row, "lane", offsetof(Event, lane), lane.get());
  insert_member(row, "kind", offsetof(Event, kind), kind.get());
  insert_member(row, "message", offsetof(Event, message), message.get());
  insert_member(row, "peer", offsetof(Event, peer), H5T_NATIVE_INT32);
  insert_member(row, "bytes", offsetof(Event, bytes), H5T_NATIVE_INT64);
  insert_member(row, "t_start_ns", offsetof(Event, t_start_ns), H5T_NATIVE_INT64);
  insert_member(row, "t_end_ns", offsetof(Event, t_end_ns), H5T_NATIVE_INT64);
  return type;
}

// The same members without padding: 43 bytes a row in the file instead of 48.
DatatypeHandle make_event_file_type() {
  DatatypeHandle type = make_event_memory_type();
  check(H5Tpack(type.get()), "H5Tpack(event compound)");
  return type;
}

// Byte offsets of one packed /rounds row, one per round_columns() entry; the row's
// size depends on mpi_size. The same layout serves memory and file, so rows are written
// without conversion.
struct RoundLayout {
  explicit RoundLayout(int mpi_size) : ranks(static_cast<std::size_t>(mpi_size)) {
    for (const RoundColumn& column : round_columns()) {
      offsets.push_back(size);
      size += column.bytes(ranks);
    }
  }

  std::size_t ranks;
  std::size_t size = 0;
  std::vector<std::size_t> offsets;
};

hid_t native_type(ColumnType type) {
  switch (type) {
    case ColumnType::int32:
      return H5T_NATIVE_INT32;
    case ColumnType::int64:
      return H5T_NATIVE_INT64;
    case ColumnType::float64:
      return H5T_NATIVE_DOUBLE;
  }
  throw std::logic_error("results file: unknown column type");
}

// The compound type of a packed row, with the members where `present` is true (one
// flag per round_columns() entry): all of them for writing; for reading, those the
// file has, since a file written before a column existed lacks it.
DatatypeHandle make_round_type(const RoundLayout& layout, const std::vector<bool>& present) {
  const std::vector<RoundColumn>& columns = round_columns();
  auto type =
      owned<DatatypeHandle>(H5Tcreate(H5T_COMPOUND, layout.size), "H5Tcreate(round compound)");
  for (std::size_t index = 0; index < columns.size(); ++index) {
    if (!present[index]) continue;
    const RoundColumn& column = columns[index];
    const hid_t element = native_type(column.type());
    if (!column.per_rank()) {
      insert_member(type.get(), column.name, layout.offsets[index], element);
      continue;
    }
    const hsize_t ranks = layout.ranks;
    const auto array = owned<DatatypeHandle>(H5Tarray_create2(element, 1, &ranks),
                                             std::string("H5Tarray_create2(") + column.name + ")");
    insert_member(type.get(), column.name, layout.offsets[index], array.get());  // copies it
  }
  return type;
}

// memcpy because packed fields are not aligned. Callers have checked that the per-rank
// vectors have layout.ranks entries.
std::vector<unsigned char> pack_round(const RoundLayout& layout, const RoundRecord& record) {
  std::vector<unsigned char> row(layout.size);
  const std::vector<RoundColumn>& columns = round_columns();
  for (std::size_t index = 0; index < columns.size(); ++index) {
    unsigned char* at = row.data() + layout.offsets[index];
    std::visit(
        [&](auto member) {
          const auto& value = record.*member;
          if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::vector<double>>) {
            std::memcpy(at, value.data(), layout.ranks * sizeof(double));
          } else {
            std::memcpy(at, &value, sizeof value);
          }
        },
        columns[index].field);
  }
  return row;
}

// Columns the file lacks read as 0 (integers) or NaN (floats: no value recorded).
RoundRecord unpack_round(const RoundLayout& layout, const std::vector<bool>& present,
                         const unsigned char* row) {
  RoundRecord record;
  const std::vector<RoundColumn>& columns = round_columns();
  for (std::size_t index = 0; index < columns.size(); ++index) {
    const unsigned char* at = row + layout.offsets[index];
    const bool stored = present[index];
    std::visit(
        [&](auto member) {
          auto& value = record.*member;
          using Value = std::decay_t<decltype(value)>;
          constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();
          if constexpr (std::is_same_v<Value, std::vector<double>>) {
            value.assign(layout.ranks, kMissing);
            if (stored) std::memcpy(value.data(), at, layout.ranks * sizeof(double));
          } else if constexpr (std::is_floating_point_v<Value>) {
            value = kMissing;
            if (stored) std::memcpy(&value, at, sizeof value);
          } else {
            value = 0;
            if (stored) std::memcpy(&value, at, sizeof value);
          }
        },
        columns[index].field);
  }
  return record;
}

// Every per-rank column must have one entry per rank; names all that do not.
void validate_round(const RoundRecord& record, std::size_t ranks) {
  std::string wrong;
  for (const RoundColumn& column : round_columns()) {
    const auto* member = std::get_if<RoundColumn::PerRank>(&column.field);
    if (member == nullptr) continue;
    const std::size_t size = (record.**member).size();
    if (size == ranks) continue;
    wrong += std::string(wrong.empty() ? "" : ", ") + column.name + " has " +
             std::to_string(size);
  }
  if (!wrong.empty()) {
    throw std::invalid_argument("results file: round " + std::to_string(record.round) + ": " +
                                wrong + " entries, expected one per rank (" +
                                std::to_string(ranks) + "; NaN where a rank has no value)");
  }
}

// --- Writing and reading -------------------------------------------------------------

std::string rank_group_name(int rank) { return "/ranks/" + std::to_string(rank); }
std::string events_dataset_name(int rank) { return rank_group_name(rank) + "/events"; }

void write_string_array_attribute(hid_t owner, const std::string& name,
                                  const std::vector<std::string>& values,
                                  const std::string& where) {
  const DatatypeHandle type = make_string_type();
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
}

void validate_event(const Event& event) {
  if (static_cast<std::size_t>(event.lane) >= lane_names().size()) {
    throw std::invalid_argument("results file: event with unknown lane value " +
                                std::to_string(static_cast<int>(event.lane)));
  }
  if (static_cast<std::size_t>(event.kind) >= event_kind_names().size()) {
    throw std::invalid_argument("results file: event with unknown kind value " +
                                std::to_string(static_cast<int>(event.kind)));
  }
  if (static_cast<std::size_t>(event.message) >= message_type_names().size()) {
    throw std::invalid_argument("results file: event with unknown message value " +
                                std::to_string(static_cast<int>(event.message)));
  }
}

// Without evictions the metadata cache writes nothing between flushes. Otherwise it
// may write some of the metadata of an unflushed append (say, a dataset's new extent
// but not the index of its new chunk) when it needs room, and a process killed then
// leaves a file whose last table is inconsistent (seen with a 16 KiB cache: a killed
// writer's file showed the unflushed round's events). The results file's metadata is
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

// The root group keeps its attributes in dense storage: a per-rank attribute
// (clock_offsets_ns, hosts) outgrows the 64 KiB of an object header's compact storage
// beyond some 8,000 ranks (`cmlbed simulate --devices 10000`).
PropertyListHandle make_file_creation(const std::string& path) {
  auto creation = owned<PropertyListHandle>(H5Pcreate(H5P_FILE_CREATE),
                                            "H5Pcreate(file creation for " + quoted(path) + ")");
  check(H5Pset_attr_phase_change(creation.get(), 0, 0), "H5Pset_attr_phase_change(dense)");
  return creation;
}

// An empty, chunked, unlimited one-dimensional table of `row_type`.
DatasetHandle create_table(hid_t parent, const std::string& name, hid_t row_type,
                           hsize_t chunk_rows, const std::string& where) {
  const hsize_t initial = 0;
  const hsize_t maximum = H5S_UNLIMITED;
  auto space = owned<DataspaceHandle>(H5Screate_simple(1, &initial, &maximum),
                                      "H5Screate_simple(unlimited)");
  auto creation =
      owned<PropertyListHandle>(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate(dataset creation)");
  check(H5Pset_chunk(creation.get(), 1, &chunk_rows), "H5Pset_chunk");
  return owned<DatasetHandle>(H5Dcreate2(parent, name.c_str(), row_type, space.get(), H5P_DEFAULT,
                                         creation.get(), H5P_DEFAULT),
                              "H5Dcreate2(" + quoted(name) + " in " + where + ")");
}

// Grows the table by `count` rows and writes them. On a failed write the extent is
// put back, so that the table never shows rows that were not written.
// Writes rows [first, first + count) of a one-dimensional dataset that has them.
void write_rows(hid_t dataset, hsize_t first, hsize_t count, hid_t memory_type, const void* data,
                const std::string& what) {
  auto file_space = owned<DataspaceHandle>(H5Dget_space(dataset), "H5Dget_space(" + what + ")");
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &first, nullptr, &count, nullptr),
        "H5Sselect_hyperslab(" + what + ")");
  const DataspaceHandle memory_space = vector_space(count);
  check(H5Dwrite(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, data),
        "H5Dwrite(" + what + ")");
}

void append_rows(hid_t dataset, hsize_t& rows, hsize_t count, hid_t memory_type, const void* data,
                 const std::string& what) {
  const hsize_t old_rows = rows;
  const hsize_t new_rows = old_rows + count;
  check(H5Dset_extent(dataset, &new_rows), "H5Dset_extent(" + what + ")");
  try {
    write_rows(dataset, old_rows, count, memory_type, data, what);
  } catch (...) {
    H5Dset_extent(dataset, &old_rows);  // best effort; the first error is the one to report
    throw;
  }
  rows = new_rows;
}

FileHandle open_read_only(const std::string& path) {
  hdf5::silence_error_printing();
  return owned<FileHandle>(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT),
                           "H5Fopen(" + quoted(path) + ", read-only)");
}

hsize_t row_count(hid_t dataset, const std::string& what) {
  auto space = owned<DataspaceHandle>(H5Dget_space(dataset), "H5Dget_space(" + what + ")");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank != 1) {
    throw Hdf5Error(what + ": expected a one-dimensional table, found rank " +
                    std::to_string(rank));
  }
  hsize_t rows = 0;
  check(H5Sget_simple_extent_dims(space.get(), &rows, nullptr),
        "H5Sget_simple_extent_dims(" + what + ")");
  return rows;
}

// mpi_size as the rounds table records it: the length of its busy_s arrays, a column
// that every version of the file has.
int rounds_rank_count(hid_t dataset, const std::string& what) {
  auto file_type = owned<DatatypeHandle>(H5Dget_type(dataset), "H5Dget_type(" + what + ")");
  const int index = H5Tget_member_index(file_type.get(), "busy_s");
  if (index < 0) throw Hdf5Error(what + ": the rows have no busy_s member");
  auto member =
      owned<DatatypeHandle>(H5Tget_member_type(file_type.get(), static_cast<unsigned>(index)),
                            "H5Tget_member_type(" + what + ", busy_s)");
  if (H5Tget_class(member.get()) != H5T_ARRAY || H5Tget_array_ndims(member.get()) != 1) {
    throw Hdf5Error(what + ": busy_s is not a one-dimensional array");
  }
  hsize_t length = 0;
  check(H5Tget_array_dims2(member.get(), &length), "H5Tget_array_dims2(" + what + ")");
  return static_cast<int>(length);
}

// Which of round_columns() the file's /rounds rows have (older files lack the newer).
std::vector<bool> stored_round_columns(hid_t dataset, const std::string& what) {
  auto file_type = owned<DatatypeHandle>(H5Dget_type(dataset), "H5Dget_type(" + what + ")");
  std::vector<bool> present;
  for (const RoundColumn& column : round_columns()) {
    present.push_back(H5Tget_member_index(file_type.get(), column.name) >= 0);
  }
  return present;
}

herr_t collect_attribute_name(hid_t /*owner*/, const char* name, const H5A_info_t* /*info*/,
                              void* names) {
  static_cast<std::vector<std::string>*>(names)->emplace_back(name);
  return 0;
}

// A /checkpoints row: CheckpointRecord in memory, packed in the file.
DatatypeHandle make_checkpoint_memory_type() {
  auto type = owned<DatatypeHandle>(H5Tcreate(H5T_COMPOUND, sizeof(CheckpointRecord)),
                                    "H5Tcreate(checkpoint compound)");
  insert_member(type.get(), "rounds", offsetof(CheckpointRecord, rounds), H5T_NATIVE_INT32);
  insert_member(type.get(), "bytes", offsetof(CheckpointRecord, bytes), H5T_NATIVE_INT64);
  insert_member(type.get(), "seconds", offsetof(CheckpointRecord, seconds), H5T_NATIVE_DOUBLE);
  return type;
}

constexpr const char* kCheckpointsTable = "/checkpoints";

// Shrinks a table to its first `keep` rows; refuses to grow it.
void truncate_table(hid_t dataset, hsize_t& rows, hsize_t keep, const std::string& what) {
  if (keep > rows) {
    throw std::invalid_argument(what + " holds " + std::to_string(rows) + " rows, fewer than the " +
                                std::to_string(keep) + " the checkpoint recorded; the checkpoint "
                                "belongs to another version of the file");
  }
  check(H5Dset_extent(dataset, &keep), "H5Dset_extent(" + what + ")");
  rows = keep;
}

// Creates the group at `path` unless it exists (its parent must).
void ensure_group(hid_t file, const std::string& path, const std::string& file_where) {
  const std::string where = quoted(path) + " in " + file_where;
  if (check_bool(H5Lexists(file, path.c_str(), H5P_DEFAULT), "H5Lexists(" + where + ")")) return;
  owned<GroupHandle>(H5Gcreate2(file, path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                     "H5Gcreate2(" + where + ")");
}

// Writes `values` as the float64 dataset at `path`, replacing one there.
void replace_float64_dataset(hid_t file, const std::string& path, const std::vector<double>& values,
                             const std::string& where) {
  if (check_bool(H5Lexists(file, path.c_str(), H5P_DEFAULT), "H5Lexists(" + where + ")")) {
    check(H5Ldelete(file, path.c_str(), H5P_DEFAULT), "H5Ldelete(" + where + ")");
  }
  const auto space = vector_space(values.size());
  const auto dataset = owned<DatasetHandle>(
      H5Dcreate2(file, path.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      "H5Dcreate2(" + where + ")");
  if (values.empty()) return;
  check(H5Dwrite(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
        "H5Dwrite(" + where + ")");
}

// Each (name, values) of `columns` as the float64 dataset <group>/<name>, replacing one.
template <typename Columns>
void replace_float64_columns(hid_t file, const std::string& group, const Columns& columns,
                             const std::string& file_where) {
  for (const auto& [name, values] : columns) {
    const std::string path = group + "/" + name;
    replace_float64_dataset(file, path, *values, quoted(path) + " in " + file_where);
  }
}

}  // namespace

struct ResultsFile::Impl {
  Impl(const std::string& file_path, int ranks)
      : path(file_path), mpi_size(ranks), round_layout(ranks) {}

  std::string path;
  int mpi_size;
  RoundLayout round_layout;
  // The file is declared first so that it is closed last.
  FileHandle file;
  GroupHandle summary;
  std::vector<DatasetHandle> events;  // one per rank
  std::vector<hsize_t> event_rows;
  DatasetHandle rounds;
  hsize_t round_rows = 0;
  DatasetHandle checkpoints;  // opened or created with the first checkpoint recorded
  hsize_t checkpoint_rows = 0;
  DatatypeHandle event_memory_type;
  DatatypeHandle round_type;

  std::string where() const { return quoted(path); }
};

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

  write_string_attribute(file, "config", info.config_ini, where);
  write_string_attribute(file, "cmlbed_version", info.cmlbed_version, where);
  write_string_attribute(file, "git_revision", info.git_revision, where);
  write_string_attribute(file, "method", info.method, where);
  write_string_attribute(file, "started_at", info.started_at, where);
  write_string_attribute(file, "heap", info.heap, where);
  const std::int32_t mpi_size = info.mpi_size;
  write_attribute(file, "mpi_size", H5T_NATIVE_INT32, scalar_space(), &mpi_size, where);
  if (!info.hosts.empty()) write_string_array_attribute(file, "hosts", info.hosts, where);
  const hsize_t ranks = static_cast<hsize_t>(info.mpi_size);
  write_attribute(file, "clock_offsets_ns", H5T_NATIVE_INT64, vector_space(ranks),
                  info.clock_offsets_ns.data(), where);
  write_attribute(file, "clock_uncertainty_ns", H5T_NATIVE_INT64, vector_space(ranks),
                  info.clock_uncertainty_ns.data(), where);

  impl->event_memory_type = make_event_memory_type();
  const DatatypeHandle event_file_type = make_event_file_type();
  const auto ranks_group =
      owned<GroupHandle>(H5Gcreate2(file, "/ranks", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                         "H5Gcreate2('/ranks' in " + where + ")");
  for (int rank = 0; rank < info.mpi_size; ++rank) {
    const std::string group_name = rank_group_name(rank);
    const auto group = owned<GroupHandle>(
        H5Gcreate2(file, group_name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        "H5Gcreate2(" + quoted(group_name) + " in " + where + ")");
    impl->events.push_back(
        create_table(group.get(), "events", event_file_type.get(), kEventChunkRows, where));
    impl->event_rows.push_back(0);
  }

  impl->round_type =
      make_round_type(impl->round_layout, std::vector<bool>(round_columns().size(), true));
  const hsize_t round_chunk_rows = std::max<hsize_t>(1, kRoundChunkBytes / impl->round_layout.size);
  impl->rounds = create_table(file, "rounds", impl->round_type.get(), round_chunk_rows, where);
  impl->summary =
      owned<GroupHandle>(H5Gcreate2(file, "/summary", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                         "H5Gcreate2('/summary' in " + where + ")");
  // On disk at once: a run that dies before its first round leaves a readable file with
  // its metadata and zero rounds (without this, 96 bytes h5py cannot open).
  check(H5Fflush(file, H5F_SCOPE_GLOBAL), "H5Fflush(" + where + ", after creating it)");
  impl_ = std::move(impl);
}

ResultsFile::ResultsFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ResultsFile ResultsFile::reopen(const std::string& path, const RowCounts& keep, int resumed_after,
                               const std::string& config_ini) {
  hdf5::silence_error_printing();
  const std::string where = quoted(path);
  const PropertyListHandle access = make_file_access(path);
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
  for (int rank = 0; rank < mpi_size; ++rank) {
    const std::string name = events_dataset_name(rank);
    const std::string what = quoted(name) + " in " + where;
    impl->events.push_back(
        owned<DatasetHandle>(H5Dopen2(handle, name.c_str(), H5P_DEFAULT), "H5Dopen2(" + what + ")"));
    hsize_t rows = row_count(impl->events.back().get(), what);
    truncate_table(impl->events.back().get(), rows, keep.events[static_cast<std::size_t>(rank)], what);
    impl->event_rows.push_back(rows);
  }
  const std::string rounds_what = "'/rounds' in " + where;
  impl->rounds = owned<DatasetHandle>(H5Dopen2(handle, "/rounds", H5P_DEFAULT), "H5Dopen2(" + rounds_what + ")");
  impl->round_rows = row_count(impl->rounds.get(), rounds_what);
  truncate_table(impl->rounds.get(), impl->round_rows, keep.rounds, rounds_what);
  impl->round_type =
      make_round_type(impl->round_layout, std::vector<bool>(round_columns().size(), true));
  if (check_bool(H5Lexists(handle, kCheckpointsTable, H5P_DEFAULT), "H5Lexists(/checkpoints)")) {
    const std::string what = "'/checkpoints' in " + where;
    impl->checkpoints =
        owned<DatasetHandle>(H5Dopen2(handle, kCheckpointsTable, H5P_DEFAULT), "H5Dopen2(" + what + ")");
    impl->checkpoint_rows = row_count(impl->checkpoints.get(), what);
  }

  // The run goes on: what marked its end (or its stop) no longer holds.
  if (check_bool(H5Lexists(handle, "/model", H5P_DEFAULT), "H5Lexists(/model)")) {
    check(H5Ldelete(handle, "/model", H5P_DEFAULT), "H5Ldelete('/model' in " + where + ")");
  }
  hdf5::delete_attribute_if_present(handle, "interrupted", where);
  hdf5::delete_attribute_if_present(handle, "rounds_complete", where);
  impl->summary =
      owned<GroupHandle>(H5Gopen2(handle, "/summary", H5P_DEFAULT), "H5Gopen2('/summary' in " + where + ")");
  std::vector<std::string> names;
  hsize_t position = 0;
  check(H5Aiterate2(impl->summary.get(), H5_INDEX_NAME, H5_ITER_INC, &position, collect_attribute_name, &names),
        "H5Aiterate2('/summary' in " + where + ")");
  for (const std::string& name : names) {
    hdf5::delete_attribute_if_present(impl->summary.get(), name, "'/summary' in " + where);
  }
  std::vector<std::int32_t> resumed;
  if (hdf5::has_attribute(handle, "resumed_after_rounds", where)) {
    resumed.resize(hdf5::attribute_elements(handle, "resumed_after_rounds", where));
    hdf5::read_attribute(handle, "resumed_after_rounds", H5T_NATIVE_INT32, resumed.data(), resumed.size(), where);
  }
  resumed.push_back(resumed_after);
  write_string_attribute(handle, "config", config_ini, where);
  write_attribute(handle, "resumed_after_rounds", H5T_NATIVE_INT32, vector_space(resumed.size()), resumed.data(),
                  where);
  check(H5Fflush(handle, H5F_SCOPE_GLOBAL), "H5Fflush(" + where + ", after reopening it)");
  return ResultsFile(std::move(impl));
}

ResultsFile::~ResultsFile() = default;
ResultsFile::ResultsFile(ResultsFile&&) noexcept = default;
ResultsFile& ResultsFile::operator=(ResultsFile&&) noexcept = default;

ResultsFile::Impl& ResultsFile::open_impl() const {
  if (!impl_) throw std::logic_error("results file used after close() or a move");
  return *impl_;
}

const std::string& ResultsFile::path() const { return open_impl().path; }
int ResultsFile::mpi_size() const { return open_impl().mpi_size; }

void ResultsFile::append_events(int rank, const std::vector<Event>& events) {
  Impl& impl = open_impl();
  if (rank < 0 || rank >= impl.mpi_size) {
    throw std::invalid_argument("results file: events for rank " + std::to_string(rank) +
                                ", expected 0.." + std::to_string(impl.mpi_size - 1));
  }
  for (const Event& event : events) validate_event(event);
  if (events.empty()) return;
  hdf5::silence_error_printing();
  const auto index = static_cast<std::size_t>(rank);
  append_rows(impl.events[index].get(), impl.event_rows[index], events.size(),
              impl.event_memory_type.get(), events.data(),
              quoted(events_dataset_name(rank)) + " in " + impl.where());
}

void ResultsFile::append_round(const RoundRecord& record) {
  Impl& impl = open_impl();
  validate_round(record, impl.round_layout.ranks);
  hdf5::silence_error_printing();
  const std::vector<unsigned char> row = pack_round(impl.round_layout, record);
  append_rows(impl.rounds.get(), impl.round_rows, 1, impl.round_type.get(), row.data(),
              "'/rounds' in " + impl.where());
}

void ResultsFile::replace_last_round(const RoundRecord& record) {
  Impl& impl = open_impl();
  if (impl.round_rows == 0) throw std::logic_error("replace_last_round: '/rounds' in " + impl.where() + " is empty");
  validate_round(record, impl.round_layout.ranks);
  hdf5::silence_error_printing();
  const std::vector<unsigned char> row = pack_round(impl.round_layout, record);
  write_rows(impl.rounds.get(), impl.round_rows - 1, 1, impl.round_type.get(), row.data(),
             "'/rounds' in " + impl.where());
}

void ResultsFile::set_summary(const std::vector<std::pair<std::string, double>>& values) {
  Impl& impl = open_impl();
  hdf5::silence_error_printing();
  const std::string where = "'/summary' in " + impl.where();
  for (const auto& [name, value] : values) {
    write_attribute(impl.summary.get(), name, H5T_NATIVE_DOUBLE, scalar_space(), &value, where);
  }
}

void ResultsFile::mark_interrupted(const std::string& signal, int rounds_complete) {
  Impl& impl = open_impl();
  hdf5::silence_error_printing();
  const hid_t file = impl.file.get();
  write_string_attribute(file, "interrupted", signal, impl.where());
  const std::int32_t complete = rounds_complete;
  write_attribute(file, "rounds_complete", H5T_NATIVE_INT32, scalar_space(), &complete, impl.where());
}

void ResultsFile::write_plan(const PlanTable& plan) {
  Impl& impl = open_impl();
  hdf5::silence_error_printing();
  const hid_t file = impl.file.get();
  const std::string where = "'/plan' in " + impl.where();
  const auto group = owned<GroupHandle>(H5Gcreate2(file, "/plan", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                        "H5Gcreate2(" + where + ")");
  const std::pair<const char*, const std::vector<double>*> columns[] = {
      {"split", &plan.split},           {"micro_batches", &plan.micro_batches}, {"round_s", &plan.round_s},
      {"server_idle", &plan.server_idle}, {"device_idle", &plan.device_idle},   {"bytes", &plan.bytes},
      {"device_split", &plan.device_split}, {"device_micro_batches", &plan.device_micro_batches}};
  replace_float64_columns(file, "/plan", columns, impl.where());
  const std::pair<const char*, std::int32_t> integers[] = {{"chosen_split", plan.chosen_split},
                                                           {"chosen_micro_batches", plan.chosen_micro_batches},
                                                           {"closed_form_micro_batches", plan.closed_form_micro_batches},
                                                           {"passes", plan.passes}};
  for (const auto& [name, value] : integers) {
    write_attribute(group.get(), name, H5T_NATIVE_INT32, scalar_space(), &value, where);
  }
  write_attribute(group.get(), "predicted_round_s", H5T_NATIVE_DOUBLE, scalar_space(), &plan.predicted_round_s, where);
  write_attribute(group.get(), "uniform_round_s", H5T_NATIVE_DOUBLE, scalar_space(), &plan.uniform_round_s, where);
  write_attribute(group.get(), "closed_form_round_s", H5T_NATIVE_DOUBLE, scalar_space(), &plan.closed_form_round_s,
                  where);
  write_string_attribute(group.get(), "profile", plan.profile_json, where);
}

void ResultsFile::set_root_number(const std::string& name, double value) {
  Impl& impl = open_impl();
  hdf5::silence_error_printing();
  write_attribute(impl.file.get(), name, H5T_NATIVE_DOUBLE, scalar_space(), &value, impl.where());
}

void ResultsFile::mark_simulated(const std::string& profile_json) {
  Impl& impl = open_impl();
  hdf5::silence_error_printing();
  const hid_t file = impl.file.get();
  const std::int32_t simulated = 1;
  write_attribute(file, "simulated", H5T_NATIVE_INT32, scalar_space(), &simulated, impl.where());
  write_string_attribute(file, "profile", profile_json, impl.where());
}

void ResultsFile::write_model(const std::string& name, const std::vector<float>& weights) {
  Impl& impl = open_impl();
  hdf5::silence_error_printing();
  const std::string where = "'/model/" + name + "' in " + impl.where();
  if (!check_bool(H5Lexists(impl.file.get(), "/model", H5P_DEFAULT), "H5Lexists(/model)")) {
    owned<GroupHandle>(H5Gcreate2(impl.file.get(), "/model", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                       "H5Gcreate2('/model' in " + impl.where() + ")");
  }
  const auto space = vector_space(weights.size());
  const auto dataset = owned<DatasetHandle>(
      H5Dcreate2(impl.file.get(), ("/model/" + name).c_str(), H5T_IEEE_F32LE, space.get(), H5P_DEFAULT,
                 H5P_DEFAULT, H5P_DEFAULT),
      "H5Dcreate2(" + where + ")");
  check(H5Dwrite(dataset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, weights.data()),
        "H5Dwrite(" + where + ")");
}

void ResultsFile::write_process_measure(const std::string& name, const std::vector<double>& per_rank) {
  Impl& impl = open_impl();
  if (per_rank.size() != static_cast<std::size_t>(impl.mpi_size)) {
    throw std::invalid_argument("write_process_measure(" + quoted(name) + "): " +
                                std::to_string(per_rank.size()) + " values for " +
                                std::to_string(impl.mpi_size) + " ranks");
  }
  hdf5::silence_error_printing();
  const hid_t file = impl.file.get();
  const std::string path = "/process/" + name;
  const std::string where = quoted(path) + " in " + impl.where();
  ensure_group(file, "/process", impl.where());
  replace_float64_dataset(file, path, per_rank, where);
}

void ResultsFile::write_replans(const ReplanTable& table) {
  Impl& impl = open_impl();
  hdf5::silence_error_printing();
  const hid_t file = impl.file.get();
  ensure_group(file, "/plan", impl.where());
  ensure_group(file, "/plan/replans", impl.where());
  const std::pair<const char*, const std::vector<double>*> columns[] = {
      {"round", &table.round},
      {"device", &table.device},
      {"uplink_bits_per_second", &table.uplink_bits_per_second},
      {"downlink_bits_per_second", &table.downlink_bits_per_second},
      {"split", &table.split},
      {"micro_batches", &table.micro_batches},
      {"predicted_round_s", &table.predicted_round_s},
      {"previous_plan_round_s", &table.previous_plan_round_s},
      {"changed", &table.changed}};
  for (const auto& [name, values] : columns) {
    if (values->size() != table.round.size()) {
      throw std::invalid_argument(std::string("write_replans: column ") + name + " has " +
                                  std::to_string(values->size()) + " rows, round has " +
                                  std::to_string(table.round.size()));
    }
  }
  replace_float64_columns(file, "/plan/replans", columns, impl.where());
}

std::vector<double> ResultsFile::read_process_measure(const std::string& path, const std::string& name) {
  return read_float64_dataset(path, "/process/" + name);
}

std::vector<double> ResultsFile::read_float64_dataset(const std::string& path, const std::string& name) {
  const FileHandle file = open_read_only(path);
  const std::string where = quoted(name) + " in " + quoted(path);
  const auto dataset = owned<DatasetHandle>(
      H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT), "H5Dopen2(" + where + ")");
  const auto space = owned<DataspaceHandle>(H5Dget_space(dataset.get()), "H5Dget_space(" + where + ")");
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (count < 0) hdf5::throw_error("H5Sget_simple_extent_npoints(" + where + ")");
  std::vector<double> values(static_cast<std::size_t>(count));
  check(H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
        "H5Dread(" + where + ")");
  return values;
}

std::vector<float> ResultsFile::read_model(const std::string& path, const std::string& name) {
  const FileHandle file = open_read_only(path);
  const std::string where = "'/model/" + name + "' in " + quoted(path);
  const auto dataset = owned<DatasetHandle>(H5Dopen2(file.get(), ("/model/" + name).c_str(), H5P_DEFAULT),
                                            "H5Dopen2(" + where + ")");
  const auto space = owned<DataspaceHandle>(H5Dget_space(dataset.get()), "H5Dget_space(" + where + ")");
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (count < 0) hdf5::throw_error("H5Sget_simple_extent_npoints(" + where + ")");
  std::vector<float> weights(static_cast<std::size_t>(count));
  check(H5Dread(dataset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, weights.data()),
        "H5Dread(" + where + ")");
  return weights;
}

RowCounts ResultsFile::row_counts() const {
  const Impl& impl = open_impl();
  RowCounts counts;
  counts.rounds = impl.round_rows;
  counts.events.assign(impl.event_rows.begin(), impl.event_rows.end());
  return counts;
}

void ResultsFile::record_checkpoint(const CheckpointRecord& record, const std::string& checkpoint_file) {
  Impl& impl = open_impl();
  hdf5::silence_error_printing();
  const hid_t file = impl.file.get();
  const std::string what = "'/checkpoints' in " + impl.where();
  const DatatypeHandle memory_type = make_checkpoint_memory_type();
  if (!impl.checkpoints) {
    DatatypeHandle file_type = make_checkpoint_memory_type();
    check(H5Tpack(file_type.get()), "H5Tpack(checkpoint compound)");
    impl.checkpoints = create_table(file, "checkpoints", file_type.get(), 256, impl.where());
    impl.checkpoint_rows = 0;
  }
  append_rows(impl.checkpoints.get(), impl.checkpoint_rows, 1, memory_type.get(), &record, what);
  const std::int32_t rounds = record.rounds;
  write_attribute(file, "checkpoint_rounds", H5T_NATIVE_INT32, scalar_space(), &rounds, impl.where());
  write_string_attribute(file, "checkpoint_file", checkpoint_file, impl.where());
}

int ResultsFile::read_mpi_size(const std::string& path) {
  const FileHandle file = open_read_only(path);
  std::int32_t size = 0;
  hdf5::read_attribute(file.get(), "mpi_size", H5T_NATIVE_INT32, &size, 1, quoted(path));
  return size;
}

std::vector<CheckpointRecord> ResultsFile::read_checkpoints(const std::string& path) {
  const FileHandle file = open_read_only(path);
  std::vector<CheckpointRecord> records;
  if (!check_bool(H5Lexists(file.get(), kCheckpointsTable, H5P_DEFAULT), "H5Lexists(/checkpoints)")) {
    return records;
  }
  const std::string what = "'/checkpoints' in " + quoted(path);
  const auto dataset =
      owned<DatasetHandle>(H5Dopen2(file.get(), kCheckpointsTable, H5P_DEFAULT), "H5Dopen2(" + what + ")");
  records.resize(row_count(dataset.get(), what));
  if (records.empty()) return records;
  const DatatypeHandle memory_type = make_checkpoint_memory_type();
  check(H5Dread(dataset.get(), memory_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, records.data()),
        "H5Dread(" + what + ")");
  return records;
}

void ResultsFile::flush() {
  Impl& impl = open_impl();
  hdf5::silence_error_printing();
  check(H5Fflush(impl.file.get(), H5F_SCOPE_GLOBAL), "H5Fflush(" + impl.where() + ")");
}

void ResultsFile::close() {
  Impl& impl = open_impl();
  hdf5::silence_error_printing();
  const std::string where = impl.where();
  impl.summary.close("H5Gclose('/summary' in " + where + ")");
  for (DatasetHandle& events : impl.events) events.close("H5Dclose(events in " + where + ")");
  impl.rounds.close("H5Dclose('/rounds' in " + where + ")");
  impl.checkpoints.close("H5Dclose('/checkpoints' in " + where + ")");
  impl.file.close("H5Fclose(" + where + ")");
  impl_.reset();
}

std::vector<Event> ResultsFile::read_events(const std::string& path, int rank) {
  const FileHandle file = open_read_only(path);
  const std::string name = events_dataset_name(rank);
  const std::string what = quoted(name) + " in " + quoted(path);
  const auto dataset = owned<DatasetHandle>(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT),
                                            "H5Dopen2(" + what + ")");
  // A file written before events named their message has no "message" member. HDF5
  // converts compound rows by member name and leaves a member the file lacks as the
  // buffer holds it (the buffer is the conversion's background), so such events read
  // with the default-constructed message, none; a test reads such a file.
  std::vector<Event> events(row_count(dataset.get(), what));
  if (events.empty()) return events;
  const DatatypeHandle memory_type = make_event_memory_type();
  check(H5Dread(dataset.get(), memory_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, events.data()),
        "H5Dread(" + what + ")");
  return events;
}

std::vector<RoundRecord> ResultsFile::read_rounds(const std::string& path) {
  const FileHandle file = open_read_only(path);
  const std::string what = "'/rounds' in " + quoted(path);
  const auto dataset =
      owned<DatasetHandle>(H5Dopen2(file.get(), "/rounds", H5P_DEFAULT), "H5Dopen2(" + what + ")");
  const hsize_t rows = row_count(dataset.get(), what);
  const RoundLayout layout(rounds_rank_count(dataset.get(), what));
  const std::vector<bool> present = stored_round_columns(dataset.get(), what);
  const DatatypeHandle memory_type = make_round_type(layout, present);
  std::vector<unsigned char> bytes(static_cast<std::size_t>(rows) * layout.size);
  std::vector<RoundRecord> records;
  if (rows == 0) return records;
  check(H5Dread(dataset.get(), memory_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()),
        "H5Dread(" + what + ")");
  for (hsize_t row = 0; row < rows; ++row) {
    records.push_back(unpack_round(layout, present, bytes.data() + row * layout.size));
  }
  return records;
}

std::string ResultsFile::read_string_attribute(const std::string& path, const std::string& name) {
  const FileHandle file = open_read_only(path);
  const std::string what = "attribute " + quoted(name) + " of '/' in " + quoted(path);
  const auto attribute = owned<AttributeHandle>(
      H5Aopen_by_name(file.get(), "/", name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
      "H5Aopen_by_name(" + what + ")");
  return hdf5::read_string_attribute(attribute.get(), what);
}

std::vector<std::pair<std::string, double>> ResultsFile::read_summary(const std::string& path) {
  const FileHandle file = open_read_only(path);
  const std::string where = "'/summary' in " + quoted(path);
  const auto summary =
      owned<GroupHandle>(H5Gopen2(file.get(), "/summary", H5P_DEFAULT), "H5Gopen2(" + where + ")");
  std::vector<std::string> names;
  hsize_t position = 0;
  check(H5Aiterate2(summary.get(), H5_INDEX_NAME, H5_ITER_INC, &position, collect_attribute_name,
                    &names),
        "H5Aiterate2(" + where + ")");
  std::vector<std::pair<std::string, double>> values;
  for (const std::string& name : names) {
    const std::string what = "attribute " + quoted(name) + " of " + where;
    const auto attribute = owned<AttributeHandle>(H5Aopen(summary.get(), name.c_str(), H5P_DEFAULT),
                                                  "H5Aopen(" + what + ")");
    double value = 0;
    check(H5Aread(attribute.get(), H5T_NATIVE_DOUBLE, &value), "H5Aread(" + what + ")");
    values.emplace_back(name, value);
  }
  return values;
}

}  // namespace cmlbed::trace
