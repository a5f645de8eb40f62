#pragma once
// Collectives the driver uses at round boundaries, outside the timed work, on its own
// control communicator (never the transport's).
#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "cmlbed/trace/event.hpp"

namespace cmlbed::net {

// Every rank's events, at rank 0 (index = rank); other ranks get an empty vector.
std::vector<std::vector<trace::Event>> gather_events(const std::vector<trace::Event>& mine,
                                                     MPI_Comm comm);

// One int64 per rank, at rank 0.
std::vector<std::int64_t> gather_int64(std::int64_t mine, MPI_Comm comm);

// Every rank's doubles (any length), at rank 0 (index = rank); others get nothing.
std::vector<std::vector<double>> gather_doubles(const std::vector<double>& mine, MPI_Comm comm);

// The largest of every rank's values, on every rank; waits without spinning a core
// (MPI_Iallreduce driven by wait_politely).
int max_over_ranks(int mine, MPI_Comm comm);

// Every rank's host name, at rank 0.
std::vector<std::string> gather_host_names(MPI_Comm comm);

// Every rank's string, at rank 0 (index = rank); others get an empty vector.
std::vector<std::string> gather_strings(const std::string& mine, MPI_Comm comm);

// Every rank's byte string (of any size) to rank 0, which gets them one at a time,
// rank 0's own first, in `take(rank, bytes)`: it holds at most one other rank's at once.
// The other ranks send theirs and wait without spinning (checkpoints).
void gather_blobs(const std::string& mine, MPI_Comm comm,
                  const std::function<void(int rank, const std::string& bytes)>& take);

// The reverse: rank 0 makes each rank's byte string with `make(rank)` (its own first)
// and sends it; every rank returns its own.
std::string scatter_blobs(MPI_Comm comm, const std::function<std::string(int rank)>& make);

}  // namespace cmlbed::net
