#include "hdf5_tables.hpp"

#include <stdexcept>

namespace cmlbed::trace::hdf5 {

std::string quoted(const std::string& text) { return "'" + text + "'"; }

FileHandle open_read_only(const std::string& path) {
  silence_error_printing();
  return owned<FileHandle>(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT),
                           "H5Fopen(" + quoted(path) + ", read-only)");
}

void insert_member(hid_t compound, const char* name, std::size_t offset, hid_t type) {
  check(H5Tinsert(compound, name, offset, type), std::string("H5Tinsert(") + name + ")");
}

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

void truncate_table(hid_t dataset, hsize_t& rows, hsize_t keep, const std::string& what) {
  if (keep > rows) {
    throw std::invalid_argument(what + " holds " + std::to_string(rows) + " rows, fewer than the " +
                                std::to_string(keep) + " the checkpoint recorded; the checkpoint "
                                "belongs to another version of the file");
  }
  check(H5Dset_extent(dataset, &keep), "H5Dset_extent(" + what + ")");
  rows = keep;
}

void ensure_group(hid_t file, const std::string& path, const std::string& file_where) {
  const std::string where = quoted(path) + " in " + file_where;
  if (check_bool(H5Lexists(file, path.c_str(), H5P_DEFAULT), "H5Lexists(" + where + ")")) return;
  owned<GroupHandle>(H5Gcreate2(file, path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                     "H5Gcreate2(" + where + ")");
}

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

std::size_t element_count(hid_t dataset, const std::string& where) {
  const auto space = owned<DataspaceHandle>(H5Dget_space(dataset), "H5Dget_space(" + where + ")");
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (count < 0) throw_error("H5Sget_simple_extent_npoints(" + where + ")");
  return static_cast<std::size_t>(count);
}

namespace {
herr_t collect_attribute_name(hid_t /*owner*/, const char* name, const H5A_info_t* /*info*/,
                              void* names) {
  static_cast<std::vector<std::string>*>(names)->emplace_back(name);
  return 0;
}
}  // namespace

std::vector<std::string> attribute_names(hid_t owner, const std::string& where) {
  std::vector<std::string> names;
  hsize_t position = 0;
  check(H5Aiterate2(owner, H5_INDEX_NAME, H5_ITER_INC, &position, collect_attribute_name, &names),
        "H5Aiterate2(" + where + ")");
  return names;
}

}  // namespace cmlbed::trace::hdf5
