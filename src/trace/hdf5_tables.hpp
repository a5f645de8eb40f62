#pragma once
// Tables and plain datasets of the results file, on top of hdf5_handles: one-dimensional
// chunked tables that grow by appending rows, whole float64 / float32 datasets, groups
// and attribute listing. Every call is checked; `what` / `where` name the object in
// error messages, as hdf5_handles does.
#include <cstddef>
#include <string>
#include <vector>

#include "cmlbed/trace/hdf5_handles.hpp"

namespace cmlbed::trace::hdf5 {

std::string quoted(const std::string& text);

// Opens `path` read-only (the readers' first step; silences HDF5's printing first).
FileHandle open_read_only(const std::string& path);

void insert_member(hid_t compound, const char* name, std::size_t offset, hid_t type);

// An empty, chunked, unlimited one-dimensional table of `row_type`.
DatasetHandle create_table(hid_t parent, const std::string& name, hid_t row_type,
                           hsize_t chunk_rows, const std::string& where);

// Writes rows [first, first + count) of a one-dimensional dataset that has them.
void write_rows(hid_t dataset, hsize_t first, hsize_t count, hid_t memory_type, const void* data,
                const std::string& what);

// Grows the table by `count` rows and writes them. On a failed write the extent is
// put back, so that the table never shows rows that were not written.
void append_rows(hid_t dataset, hsize_t& rows, hsize_t count, hid_t memory_type, const void* data,
                 const std::string& what);

// Rows of a one-dimensional table; Hdf5Error for another rank.
hsize_t row_count(hid_t dataset, const std::string& what);

// Shrinks a table to its first `keep` rows; refuses to grow it.
void truncate_table(hid_t dataset, hsize_t& rows, hsize_t keep, const std::string& what);

// Creates the group at `path` unless it exists (its parent must).
void ensure_group(hid_t file, const std::string& path, const std::string& file_where);

// Writes `values` as the float64 dataset at `path`, replacing one there.
void replace_float64_dataset(hid_t file, const std::string& path, const std::vector<double>& values,
                             const std::string& where);

// Every element of the dataset at `name`, converted to `memory_type` (whose elements
// are Values).
template <typename Value>
std::vector<Value> read_whole_dataset(hid_t file, const std::string& name, hid_t memory_type,
                                      const std::string& where);

// The names of `owner`'s attributes, in name order.
std::vector<std::string> attribute_names(hid_t owner, const std::string& where);

// --- implementation ------------------------------------------------------------------

std::size_t element_count(hid_t dataset, const std::string& where);

template <typename Value>
std::vector<Value> read_whole_dataset(hid_t file, const std::string& name, hid_t memory_type,
                                      const std::string& where) {
  const auto dataset =
      owned<DatasetHandle>(H5Dopen2(file, name.c_str(), H5P_DEFAULT), "H5Dopen2(" + where + ")");
  std::vector<Value> values(element_count(dataset.get(), where));
  check(H5Dread(dataset.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
        "H5Dread(" + where + ")");
  return values;
}

}  // namespace cmlbed::trace::hdf5
