#pragma once
// The HDF5 side of the /rounds table: the packed row layout and compound type derived
// from round_columns(), packing and unpacking a RoundRecord, and what a stored table
// says about itself (its rank count, which columns it has).
#include <cstddef>
#include <string>
#include <vector>

#include "cmlbed/trace/event.hpp"
#include "cmlbed/trace/hdf5_handles.hpp"

namespace cmlbed::trace {

// A rounds row grows with mpi_size (four float64 arrays); chunks of about 64 KiB.
constexpr std::size_t kRoundChunkBytes = 64 * 1024;

// Byte offsets of one packed /rounds row, one per round_columns() entry; the row's
// size depends on mpi_size. The same layout serves memory and file, so rows are written
// without conversion.
struct RoundLayout {
  explicit RoundLayout(int mpi_size);

  std::size_t ranks;
  std::size_t size = 0;
  std::vector<std::size_t> offsets;
};

// The compound type of a packed row, with the members where `present` is true (one
// flag per round_columns() entry): all of them for writing; for reading, those the
// file has, since a file written before a column existed lacks it.
hdf5::DatatypeHandle make_round_type(const RoundLayout& layout, const std::vector<bool>& present);
hdf5::DatatypeHandle make_full_round_type(const RoundLayout& layout);  // every column

// Callers have checked the record with validate_round.
std::vector<unsigned char> pack_round(const RoundLayout& layout, const RoundRecord& record);
// Columns the file lacks read as 0 (integers) or NaN (floats: no value recorded).
RoundRecord unpack_round(const RoundLayout& layout, const std::vector<bool>& present,
                         const unsigned char* row);

// Every per-rank column must have one entry per rank; std::invalid_argument names all
// that do not.
void validate_round(const RoundRecord& record, std::size_t ranks);

// mpi_size as the rounds table records it: the length of its busy_s arrays, a column
// that every version of the file has.
int rounds_rank_count(hid_t dataset, const std::string& what);

// Which of round_columns() the file's /rounds rows have (older files lack the newer).
std::vector<bool> stored_round_columns(hid_t dataset, const std::string& what);

}  // namespace cmlbed::trace
