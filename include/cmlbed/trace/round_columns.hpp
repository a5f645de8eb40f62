#pragma once
// The columns of the results file's /rounds table, described once. The writer derives
// the row layout, the HDF5 compound type, packing and unpacking from this list, and a
// test checks docs/reference/results-format.md's /rounds table against it, so that a column added
// here reaches the file, the reader and the documentation together.
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "cmlbed/trace/event.hpp"

namespace cmlbed::trace {

enum class ColumnType : std::uint8_t { int32, int64, float64 };

struct RoundColumn {
  using Int32 = std::int32_t RoundRecord::*;
  using Int64 = std::int64_t RoundRecord::*;
  using Float64 = double RoundRecord::*;
  using PerRank = std::vector<double> RoundRecord::*;  // float64[mpi_size]
  // The RoundRecord member that holds the column. Its C++ type fixes the stored type
  // and shape, so the list cannot claim int64 for a member that is a double.
  using Field = std::variant<Int32, Int64, Float64, PerRank>;

  const char* name;     // HDF5 member name; scripts read columns by it
  Field field;
  const char* unit;     // "" for a count or a fraction
  const char* meaning;  // one line; docs/reference/results-format.md says more

  ColumnType type() const;  // of the value, or of each element of a per-rank array
  bool per_rank() const { return std::holds_alternative<PerRank>(field); }
  // Bytes of the packed value: the element size, times mpi_size for a per-rank array.
  std::size_t bytes(std::size_t mpi_size) const;
};

// The columns in file order. New columns go at the end, so that older files hold a
// prefix of today's columns and positional readers keep working.
const std::vector<RoundColumn>& round_columns();

// Every per-rank column of `record` that holds no value yet (empty) gets NaN for each of
// `ranks` ranks: what nobody measured (a simulated run's CPU figures) is NaN in the file.
void fill_unmeasured(RoundRecord& record, std::size_t ranks);

// "int32", "int64" or "float64".
const char* column_type_name(ColumnType type);

// The type as docs/reference/results-format.md writes it: "int64", "float64[mpi_size]".
std::string column_type_text(const RoundColumn& column);

}  // namespace cmlbed::trace
