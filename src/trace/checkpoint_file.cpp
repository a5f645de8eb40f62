#include "cmlbed/trace/checkpoint_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "cmlbed/trace/hdf5_handles.hpp"

namespace cmlbed::trace {
namespace {

using hdf5::check;
using hdf5::DatasetHandle;
using hdf5::DataspaceHandle;
using hdf5::FileHandle;
using hdf5::GroupHandle;
using hdf5::owned;

// The root attribute `format` says what the file is; `format_version` changes when the
// layout does, so that an older cmlbed refuses a newer checkpoint instead of misreading it.
constexpr const char* kFormat = "cmlbed-checkpoint";
constexpr std::int32_t kFormatVersion = 1;

std::string in_quotes(const std::string& text) { return "'" + text + "'"; }
std::string state_name(int rank) { return "/states/" + std::to_string(rank); }

// fsync of a path (a file, or a directory so that a rename in it is durable).
void sync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) {
    throw std::runtime_error("cannot open " + in_quotes(path) + " to sync it: " + std::strerror(errno));
  }
  const int synced = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (synced != 0) throw std::runtime_error("fsync(" + in_quotes(path) + ") failed: " + std::strerror(error));
}

void write_int64(hid_t file, const std::string& name, std::int64_t value, const std::string& where) {
  hdf5::write_attribute(file, name, H5T_NATIVE_INT64, hdf5::scalar_space(), &value, where);
}

std::int64_t read_int64(hid_t file, const std::string& name, const std::string& where) {
  std::int64_t value = 0;
  hdf5::read_attribute(file, name, H5T_NATIVE_INT64, &value, 1, where);
  return value;
}

}  // namespace

std::string checkpoint_path(const std::string& results_path) { return results_path + ".ckpt"; }

void remove_checkpoint(const std::string& path) {
  for (const std::string& file : {path, path + ".tmp"}) {
    std::error_code error;
    std::filesystem::remove(file, error);
    if (error) throw std::runtime_error("cannot remove the old checkpoint " + in_quotes(file) + ": " + error.message());
  }
}

// ---- writer ----

struct CheckpointWriter::Impl {
  std::string path;
  std::string temporary;
  FileHandle file;
  std::vector<bool> stored;
  std::uint64_t bytes = 0;
  bool committed = false;
};

CheckpointWriter::CheckpointWriter(const std::string& path, const CheckpointInfo& info)
    : impl_(std::make_unique<Impl>()) {
  if (info.mpi_size < 1 || info.event_rows.size() != static_cast<std::size_t>(info.mpi_size)) {
    throw std::invalid_argument("checkpoint: event_rows needs one entry per rank (" +
                                std::to_string(info.mpi_size) + "), got " +
                                std::to_string(info.event_rows.size()));
  }
  hdf5::silence_error_printing();
  impl_->path = path;
  impl_->temporary = path + ".tmp";
  impl_->stored.assign(static_cast<std::size_t>(info.mpi_size), false);
  const std::string where = in_quotes(impl_->temporary);
  impl_->file = owned<FileHandle>(H5Fcreate(impl_->temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                                  "H5Fcreate(" + where + ")");
  const hid_t file = impl_->file.get();
  hdf5::write_string_attribute(file, "format", kFormat, where);
  hdf5::write_attribute(file, "format_version", H5T_NATIVE_INT32, hdf5::scalar_space(), &kFormatVersion, where);
  const std::int32_t rounds = info.rounds_complete, ranks = info.mpi_size;
  hdf5::write_attribute(file, "rounds_complete", H5T_NATIVE_INT32, hdf5::scalar_space(), &rounds, where);
  hdf5::write_attribute(file, "mpi_size", H5T_NATIVE_INT32, hdf5::scalar_space(), &ranks, where);
  hdf5::write_string_attribute(file, "config", info.config_ini, where);
  hdf5::write_string_attribute(file, "started_at", info.started_at, where);
  hdf5::write_string_attribute(file, "written_at", info.written_at, where);
  const std::int32_t seed_rule = info.seed_rule;
  hdf5::write_attribute(file, "seed_rule", H5T_NATIVE_INT32, hdf5::scalar_space(), &seed_rule, where);
  write_int64(file, "round_rows", static_cast<std::int64_t>(info.round_rows), where);
  std::vector<std::int64_t> event_rows(info.event_rows.begin(), info.event_rows.end());
  hdf5::write_attribute(file, "event_rows", H5T_NATIVE_INT64, hdf5::vector_space(event_rows.size()),
                        event_rows.data(), where);
  write_int64(file, "time_ns", info.time_ns, where);
  write_int64(file, "elapsed_ns", info.elapsed_ns, where);
  owned<GroupHandle>(H5Gcreate2(file, "/states", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                     "H5Gcreate2('/states' in " + where + ")");
}

CheckpointWriter::~CheckpointWriter() {
  if (!impl_ || impl_->committed) return;
  impl_->file.reset();
  ::unlink(impl_->temporary.c_str());  // best effort: the previous checkpoint stays valid
}

void CheckpointWriter::add_state(int rank, const std::string& bytes) {
  Impl& impl = *impl_;
  if (impl.committed) throw std::logic_error("checkpoint: add_state after commit");
  if (rank < 0 || static_cast<std::size_t>(rank) >= impl.stored.size() || impl.stored[static_cast<std::size_t>(rank)]) {
    throw std::invalid_argument("checkpoint: unexpected state of rank " + std::to_string(rank));
  }
  hdf5::silence_error_printing();
  const std::string name = state_name(rank);
  const std::string what = in_quotes(name) + " in " + in_quotes(impl.temporary);
  const auto space = hdf5::vector_space(bytes.size());
  const auto dataset = owned<DatasetHandle>(
      H5Dcreate2(impl.file.get(), name.c_str(), H5T_NATIVE_UINT8, space.get(), H5P_DEFAULT, H5P_DEFAULT,
                 H5P_DEFAULT),
      "H5Dcreate2(" + what + ")");
  if (!bytes.empty()) {
    check(H5Dwrite(dataset.get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()),
          "H5Dwrite(" + what + ")");
  }
  impl.stored[static_cast<std::size_t>(rank)] = true;
  impl.bytes += bytes.size();
}

std::uint64_t CheckpointWriter::commit() {
  Impl& impl = *impl_;
  for (std::size_t rank = 0; rank < impl.stored.size(); ++rank) {
    if (!impl.stored[rank]) {
      throw std::logic_error("checkpoint: rank " + std::to_string(rank) + "'s state is missing");
    }
  }
  hdf5::silence_error_printing();
  impl.file.close("H5Fclose(" + in_quotes(impl.temporary) + ")");
  // Durable before it replaces the old one: a crash after the rename must not leave a
  // checkpoint whose data never reached the disk.
  sync_path(impl.temporary, false);
  if (std::rename(impl.temporary.c_str(), impl.path.c_str()) != 0) {
    throw std::runtime_error("cannot rename " + in_quotes(impl.temporary) + " to " + in_quotes(impl.path) + ": " +
                             std::strerror(errno));
  }
  impl.committed = true;
  const std::filesystem::path directory = std::filesystem::path(impl.path).parent_path();
  sync_path(directory.empty() ? "." : directory.string(), true);
  return impl.bytes;
}

// ---- reader ----

struct CheckpointReader::Impl {
  std::string path;
  FileHandle file;
  CheckpointInfo info;
};

CheckpointReader::CheckpointReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  hdf5::silence_error_printing();
  impl_->path = path;
  const std::string where = in_quotes(path);
  std::error_code error;
  if (!std::filesystem::exists(path, error)) throw std::invalid_argument("no checkpoint " + where);
  const hid_t opened = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (opened < 0) {
    hdf5::take_error_stack();
    throw std::invalid_argument(where + " is not a cmlbed checkpoint (HDF5 cannot open it)");
  }
  impl_->file = FileHandle(opened);
  const hid_t file = opened;
  if (!hdf5::has_attribute(file, "format", where) || hdf5::read_string_attribute(file, "format", where) != kFormat) {
    throw std::invalid_argument(where + " is not a cmlbed checkpoint (no format attribute '" +
                                std::string(kFormat) + "')");
  }
  std::int32_t version = 0;
  hdf5::read_attribute(file, "format_version", H5T_NATIVE_INT32, &version, 1, where);
  if (version != kFormatVersion) {
    throw std::invalid_argument(where + " is a checkpoint of format version " + std::to_string(version) +
                                "; this cmlbed reads version " + std::to_string(kFormatVersion));
  }
  CheckpointInfo& info = impl_->info;
  std::int32_t rounds = 0, ranks = 0;
  hdf5::read_attribute(file, "rounds_complete", H5T_NATIVE_INT32, &rounds, 1, where);
  hdf5::read_attribute(file, "mpi_size", H5T_NATIVE_INT32, &ranks, 1, where);
  info.rounds_complete = rounds;
  info.mpi_size = ranks;
  info.config_ini = hdf5::read_string_attribute(file, "config", where);
  info.started_at = hdf5::read_string_attribute(file, "started_at", where);
  info.written_at = hdf5::read_string_attribute(file, "written_at", where);
  std::int32_t seed_rule = 1;  // written before the attribute existed
  if (hdf5::has_attribute(file, "seed_rule", where)) {
    hdf5::read_attribute(file, "seed_rule", H5T_NATIVE_INT32, &seed_rule, 1, where);
  }
  info.seed_rule = seed_rule;
  info.round_rows = static_cast<std::uint64_t>(read_int64(file, "round_rows", where));
  std::vector<std::int64_t> event_rows(static_cast<std::size_t>(std::max(0, ranks)));
  hdf5::read_attribute(file, "event_rows", H5T_NATIVE_INT64, event_rows.data(), event_rows.size(), where);
  info.event_rows.assign(event_rows.begin(), event_rows.end());
  info.time_ns = read_int64(file, "time_ns", where);
  info.elapsed_ns = read_int64(file, "elapsed_ns", where);
}

CheckpointReader::~CheckpointReader() = default;

const CheckpointInfo& CheckpointReader::info() const { return impl_->info; }

std::string CheckpointReader::state(int rank) const {
  hdf5::silence_error_printing();
  const std::string name = state_name(rank);
  const std::string what = in_quotes(name) + " in " + in_quotes(impl_->path);
  const auto dataset =
      owned<DatasetHandle>(H5Dopen2(impl_->file.get(), name.c_str(), H5P_DEFAULT), "H5Dopen2(" + what + ")");
  const auto space = owned<DataspaceHandle>(H5Dget_space(dataset.get()), "H5Dget_space(" + what + ")");
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (count < 0) hdf5::throw_error("H5Sget_simple_extent_npoints(" + what + ")");
  std::string bytes(static_cast<std::size_t>(count), '\0');
  if (count > 0) {
    check(H5Dread(dataset.get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()),
          "H5Dread(" + what + ")");
  }
  return bytes;
}

}  // namespace cmlbed::trace
