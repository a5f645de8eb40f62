#pragma once
// Puts every rank's timestamps in rank 0's time base: each device ping-pongs with rank 0
// and keeps the sample with the smallest round-trip time (Cristian's method); its
// uncertainty is half that round trip.
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace cmlbed::net {

struct ClockEstimate {
  // Add to this rank's steady-clock nanoseconds to get rank 0's time base, whose zero
  // is rank 0's steady clock when the estimate was made (so run times start near 0).
  std::int64_t offset_ns = 0;
  std::int64_t uncertainty_ns = 0;
};

// Collective over `comm`; every rank gets its own estimate (rank 0: offset = -origin).
ClockEstimate synchronize_clocks(MPI_Comm comm, int samples = 64);

// Everyone's estimates, at rank 0 (other ranks get an empty vector). Collective.
std::vector<ClockEstimate> gather_clock_estimates(const ClockEstimate& mine, MPI_Comm comm);

std::int64_t steady_now_ns();

}  // namespace cmlbed::net
