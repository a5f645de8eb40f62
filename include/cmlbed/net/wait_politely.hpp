#pragma once
#include <mpi.h>

namespace cmlbed::net {

// Waits for a request without spinning (Open MPI's blocking calls spin a core): tests
// it, sleeping between tests from 2 us doubling up to 1 ms, so that a waiting rank
// leaves the cores to the ranks that work or measure.
void wait_politely(MPI_Request& request);

// MPI_Barrier, waited for politely.
void barrier_politely(MPI_Comm comm);

}  // namespace cmlbed::net
