#pragma once
// Rank 0 hands every other rank its own bytes: how the server gives each device its
// share of the training set, so that the data set is read and decompressed once per
// run, not once per rank, and no device ever holds more than its share.
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace cmlbed::net {

using BytesForRank = std::function<std::vector<std::uint8_t>(int rank)>;

// Collective over `comm`. Rank 0 calls `bytes_for(r)` for r = 1 .. size-1 in that order
// and sends each result before asking for the next, so it holds one rank's bytes at a
// time beyond what it read; it returns an empty vector. Every other rank returns the
// bytes rank 0 made for it, waiting without spinning (wait_politely), which leaves the
// cores to rank 0 while it reads. Any size (sent in pieces of at most 1 GiB, since MPI
// counts are int). `bytes_for` is not called on other ranks and must not throw: rank 0
// sends its errors as bytes too, or the others wait for ever.
std::vector<std::uint8_t> distribute_from_root(MPI_Comm comm, const BytesForRank& bytes_for);

}  // namespace cmlbed::net
