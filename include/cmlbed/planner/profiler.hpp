#pragma once
// The profiler behind `cmlbed profile`: every rank measures its share of the work on
// the configured model with its own threads (server: train.server_threads, devices:
// train.device_threads), one rank at a time so that no rank's figures include another's
// load; rank 0 collects them into one sim::Profile.
#include <mpi.h>

#include "cmlbed/sim/profile.hpp"
#include "cmlbed/planner/plan_spec.hpp"

namespace cmlbed::planner {

struct ProfilerSettings {
  int warmup = 2;   // untimed runs before each measurement
  int repeats = 5;  // timed runs; the profile keeps their median
  // Also measure a size between the two largest and state the interpolation's error
  // (`cmlbed profile`; a run that plans skips it: it costs about half a rank's profile).
  bool check_interpolation = true;
};

// The batch sizes a plan needs measured for mini-batches of `batch`: the powers of two
// below it and `batch` itself (micro-batch sizes between them are interpolated; the
// profile states the interpolation's error at a size it also measures).
// `smallest`: the model's min_training_batch (sizes start there).
std::vector<std::int64_t> profiled_batch_sizes(std::int64_t batch, std::int64_t smallest = 1);

// Collective over `comm` (rank 0 = server). Every rank returns the whole profile (rank
// 0's is the one to write; the others get theirs back too, for a run that plans). Ranks
// on the same host with the same thread count would measure the same layers on the same
// cores, so the lowest of them measures for all (their entries name it in
// `measured_by` and carry their own role, slowdown and compute rate): on one machine
// with server and device threads equal, one rank measures instead of every rank.
sim::Profile profile_ranks(const PlanSpec& spec, MPI_Comm comm, const ProfilerSettings& settings);

// Without MPI (`cmlbed simulate` without --profile): this process measures as the
// server and as device 1 (each with its threads), one after the other.
sim::Profile profile_in_process(const PlanSpec& spec, const ProfilerSettings& settings);

}  // namespace cmlbed::planner
