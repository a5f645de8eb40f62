// /checkpoints: one row per checkpoint written, and the root attributes that say what
// `--resume` continues from.
#include <cstddef>

#include "cmlbed/trace/results_file.hpp"
#include "results_file_impl.hpp"

namespace cmlbed::trace {
namespace {

using hdf5::DatatypeHandle;

constexpr hsize_t kCheckpointChunkRows = 256;

// A /checkpoints row: CheckpointRecord in memory, packed in the file.
DatatypeHandle make_checkpoint_memory_type() {
  auto type = hdf5::owned<DatatypeHandle>(H5Tcreate(H5T_COMPOUND, sizeof(CheckpointRecord)),
                                          "H5Tcreate(checkpoint compound)");
  hdf5::insert_member(type.get(), "rounds", offsetof(CheckpointRecord, rounds), H5T_NATIVE_INT32);
  hdf5::insert_member(type.get(), "bytes", offsetof(CheckpointRecord, bytes), H5T_NATIVE_INT64);
  hdf5::insert_member(type.get(), "seconds", offsetof(CheckpointRecord, seconds), H5T_NATIVE_DOUBLE);
  return type;
}

DatatypeHandle make_checkpoint_file_type() {
  DatatypeHandle type = make_checkpoint_memory_type();
  hdf5::check(H5Tpack(type.get()), "H5Tpack(checkpoint compound)");
  return type;
}

}  // namespace

void ResultsFile::record_checkpoint(const CheckpointRecord& record, const std::string& checkpoint_file) {
  Impl& impl = open_impl();
  const hid_t file = impl.file.get();
  const std::string what = "'/checkpoints' in " + impl.where();
  const DatatypeHandle memory_type = make_checkpoint_memory_type();
  if (!impl.checkpoints) {
    const DatatypeHandle file_type = make_checkpoint_file_type();
    impl.checkpoints =
        hdf5::create_table(file, "checkpoints", file_type.get(), kCheckpointChunkRows, impl.where());
    impl.checkpoint_rows = 0;
  }
  hdf5::append_rows(impl.checkpoints.get(), impl.checkpoint_rows, 1, memory_type.get(), &record, what);
  const std::int32_t rounds = record.rounds;
  hdf5::write_attribute(file, "checkpoint_rounds", H5T_NATIVE_INT32, hdf5::scalar_space(), &rounds,
                        impl.where());
  hdf5::write_string_attribute(file, "checkpoint_file", checkpoint_file, impl.where());
}

std::vector<CheckpointRecord> ResultsFile::read_checkpoints(const std::string& path) {
  const hdf5::FileHandle file = hdf5::open_read_only(path);
  std::vector<CheckpointRecord> records;
  if (!hdf5::check_bool(H5Lexists(file.get(), kCheckpointsTable, H5P_DEFAULT), "H5Lexists(/checkpoints)")) {
    return records;
  }
  const std::string what = "'/checkpoints' in " + hdf5::quoted(path);
  const auto dataset = hdf5::owned<hdf5::DatasetHandle>(H5Dopen2(file.get(), kCheckpointsTable, H5P_DEFAULT),
                                                        "H5Dopen2(" + what + ")");
  records.resize(hdf5::row_count(dataset.get(), what));
  if (records.empty()) return records;
  const DatatypeHandle memory_type = make_checkpoint_memory_type();
  hdf5::check(H5Dread(dataset.get(), memory_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, records.data()),
              "H5Dread(" + what + ")");
  return records;
}

}  // namespace cmlbed::trace
