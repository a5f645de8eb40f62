#pragma once
// Where a rank's start-up goes, from exec to the start of round 1, in fixed phases, so
// that every rank reports the same list and rank 0 can store them side by side
// (/process in the results file, docs/reference/results-format.md).
//
// One per process (startup_clock()), like the process start it measures from: the
// phases end in different areas (the command line, the training data, the driver),
// and none of them should have to pass a clock through the others.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace cmlbed::trace {

// In the order they happen.
enum class StartupPhase {
  load,          // exec to main(): dynamic linking and static initialisers (LibTorch
                 // registers its operators here)
  mpi_init,      // MPI_Init_thread: Open MPI's wire-up of all ranks
  config,        // reading, checking and agreeing on the configuration
  libtorch,      // LibTorch's intra-op threads
  data,          // reading the data set and partitioning it
  model,         // the method's models and optimizers
  clocks,        // clock alignment with rank 0 (one device at a time)
  results_file,  // gathering hosts and clock offsets, creating the results file (rank 0)
  transport,     // the transport's thread and the barrier before round 1
};
inline constexpr std::size_t kStartupPhaseCount = 9;

// "load", "mpi_init", ... (the names in the results file, as "startup_<name>_s").
const char* startup_phase_name(StartupPhase phase);

class StartupClock {
 public:
  // Starts at the process's start (process_stats.hpp), or now where that is unknown.
  StartupClock();

  // Now is the end of `phase` and of every earlier phase not yet ended (those last 0 s:
  // the transfer method has no data or model). Ending a phase again moves its end.
  void end(StartupPhase phase);

  // A further run in this process (`cmlbed run --repeats`): its start-up counts from now,
  // and the phases before it (the process's load, MPI and configuration, done once
  // for every repeat) count 0 for it.
  void restart();

  // Seconds of each phase in enum order; phases not yet ended count 0.
  std::vector<double> phase_seconds() const;

  // CPU seconds of this process (all its threads) in each phase, in enum order. With
  // more ranks than cores the wall time of a phase says little (the ranks share the
  // cores and wait for each other); its CPU time says what the phase costs.
  std::vector<double> phase_cpu_seconds() const;

  // Seconds from the start to the end of the latest phase ended.
  double total_seconds() const;

 private:
  std::int64_t start_ns_;
  std::int64_t start_cpu_ns_ = 0;  // process CPU time at the start (0: the process's own)
  std::array<std::int64_t, kStartupPhaseCount> end_ns_{};      // 0 = not ended
  std::array<std::int64_t, kStartupPhaseCount> end_cpu_ns_{};  // process CPU time then
};

// This process's clock, started at its first use (main() uses it first).
StartupClock& startup_clock();

}  // namespace cmlbed::trace
