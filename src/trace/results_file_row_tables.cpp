// A feature's own tables of rows (ResultsFile::append_rows, read_rows): compound tables
// at the root whose fields the feature declares, so that trace/ keeps the writer and
// reader and the feature keeps the schema (docs/explanation/architecture.md).
#include <cstddef>
#include <stdexcept>

#include "cmlbed/trace/results_file.hpp"
#include "results_file_impl.hpp"

namespace cmlbed::trace {
namespace {

using hdf5::DatatypeHandle;

constexpr hsize_t kRowTableChunkRows = 256;

hid_t native_type(FieldType type) {
  switch (type) {
    case FieldType::int32: return H5T_NATIVE_INT32;
    case FieldType::int64: return H5T_NATIVE_INT64;
    case FieldType::float64: return H5T_NATIVE_DOUBLE;
  }
  throw std::logic_error("unknown FieldType");
}

void check_table_name(const std::string& table, const std::vector<RowField>& fields) {
  if (table.empty() || table.find('/') != std::string::npos) {
    throw std::invalid_argument("a feature's table is named at the root of the results file, without '/': '" +
                                table + "'");
  }
  if (fields.empty()) throw std::invalid_argument("table '" + table + "' has no fields");
}

// The row in memory: the feature's struct, field by field.
DatatypeHandle make_memory_type(const std::string& table, std::size_t row_size, const std::vector<RowField>& fields) {
  auto type = hdf5::owned<DatatypeHandle>(H5Tcreate(H5T_COMPOUND, row_size), "H5Tcreate(" + table + " compound)");
  for (const RowField& field : fields) hdf5::insert_member(type.get(), field.name, field.offset, native_type(field.type));
  return type;
}

}  // namespace

void ResultsFile::append_compound_rows(const std::string& table, std::size_t row_size,
                                       const std::vector<RowField>& fields, const void* rows, std::size_t count) {
  check_table_name(table, fields);
  Impl& impl = open_impl();
  const hid_t file = impl.file.get();
  const std::string what = "'/" + table + "' in " + impl.where();
  const DatatypeHandle memory_type = make_memory_type(table, row_size, fields);
  auto [open, created] = impl.row_tables.try_emplace(table);
  Impl::RowTable& rows_table = open->second;
  if (created) {
    if (hdf5::check_bool(H5Lexists(file, table.c_str(), H5P_DEFAULT), "H5Lexists(" + what + ")")) {
      // A reopened file (--resume): continue the table the run wrote before.
      rows_table.dataset =
          hdf5::owned<hdf5::DatasetHandle>(H5Dopen2(file, table.c_str(), H5P_DEFAULT), "H5Dopen2(" + what + ")");
      rows_table.rows = hdf5::row_count(rows_table.dataset.get(), what);
    } else {
      DatatypeHandle file_type = make_memory_type(table, row_size, fields);
      hdf5::check(H5Tpack(file_type.get()), "H5Tpack(" + table + " compound)");
      rows_table.dataset = hdf5::create_table(file, table, file_type.get(), kRowTableChunkRows, impl.where());
    }
  }
  if (count == 0) return;
  hdf5::append_rows(rows_table.dataset.get(), rows_table.rows, count, memory_type.get(), rows, what);
}

std::vector<unsigned char> ResultsFile::read_compound_rows(const std::string& path, const std::string& table,
                                                           std::size_t row_size, const std::vector<RowField>& fields) {
  check_table_name(table, fields);
  const hdf5::FileHandle file = hdf5::open_read_only(path);
  const std::string what = "'/" + table + "' in " + hdf5::quoted(path);
  std::vector<unsigned char> bytes;
  if (!hdf5::check_bool(H5Lexists(file.get(), table.c_str(), H5P_DEFAULT), "H5Lexists(" + what + ")")) return bytes;
  const auto dataset =
      hdf5::owned<hdf5::DatasetHandle>(H5Dopen2(file.get(), table.c_str(), H5P_DEFAULT), "H5Dopen2(" + what + ")");
  bytes.resize(hdf5::row_count(dataset.get(), what) * row_size);
  if (bytes.empty()) return bytes;
  const DatatypeHandle memory_type = make_memory_type(table, row_size, fields);
  hdf5::check(H5Dread(dataset.get(), memory_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()),
              "H5Dread(" + what + ")");
  return bytes;
}

}  // namespace cmlbed::trace
