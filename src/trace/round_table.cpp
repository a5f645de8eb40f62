#include "round_table.hpp"

#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>

#include "cmlbed/trace/round_columns.hpp"
#include "hdf5_tables.hpp"

namespace cmlbed::trace {
namespace {

using hdf5::check;
using hdf5::DatatypeHandle;
using hdf5::owned;

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

}  // namespace

RoundLayout::RoundLayout(int mpi_size) : ranks(static_cast<std::size_t>(mpi_size)) {
  for (const RoundColumn& column : round_columns()) {
    offsets.push_back(size);
    size += column.bytes(ranks);
  }
}

DatatypeHandle make_round_type(const RoundLayout& layout, const std::vector<bool>& present) {
  const std::vector<RoundColumn>& columns = round_columns();
  auto type =
      owned<DatatypeHandle>(H5Tcreate(H5T_COMPOUND, layout.size), "H5Tcreate(round compound)");
  for (std::size_t index = 0; index < columns.size(); ++index) {
    if (!present[index]) continue;
    const RoundColumn& column = columns[index];
    const hid_t element = native_type(column.type());
    if (!column.per_rank()) {
      hdf5::insert_member(type.get(), column.name, layout.offsets[index], element);
      continue;
    }
    const hsize_t ranks = layout.ranks;
    const auto array = owned<DatatypeHandle>(H5Tarray_create2(element, 1, &ranks),
                                             std::string("H5Tarray_create2(") + column.name + ")");
    hdf5::insert_member(type.get(), column.name, layout.offsets[index], array.get());  // copies it
  }
  return type;
}

DatatypeHandle make_full_round_type(const RoundLayout& layout) {
  return make_round_type(layout, std::vector<bool>(round_columns().size(), true));
}

// memcpy because packed fields are not aligned.
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
            value = RoundRecord{}.*member;  // missing: the record's default (-1 for emulation: not judged)
            if (stored) std::memcpy(&value, at, sizeof value);
          }
        },
        columns[index].field);
  }
  return record;
}

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

std::vector<bool> stored_round_columns(hid_t dataset, const std::string& what) {
  auto file_type = owned<DatatypeHandle>(H5Dget_type(dataset), "H5Dget_type(" + what + ")");
  std::vector<bool> present;
  for (const RoundColumn& column : round_columns()) {
    present.push_back(H5Tget_member_index(file_type.get(), column.name) >= 0);
  }
  return present;
}

}  // namespace cmlbed::trace
