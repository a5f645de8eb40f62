#pragma once
// Checkpoints of a whole run, and resuming from one (output.checkpoint, `cmlbed run
// --resume`). Every rank's piece (its method's state, save_state, and LibTorch's default
// generator) goes to rank 0, which writes them together into the side file next to the
// results file (trace/checkpoint_file.hpp) and only then records the checkpoint in the
// results file: a checkpoint exists only with every rank's piece of the same round.
// Both calls are collective over the driver's control communicator.
#include <mpi.h>

#include <cstdint>
#include <string>

#include "cmlbed/trace/results_file.hpp"
#include "cmlbed/train/method.hpp"

namespace cmlbed::run {

// Rank 0's side of a checkpoint: the results file (its row counts go into the
// checkpoint, and the checkpoint into it) and what ties the two together.
struct CheckpointTarget {
  trace::ResultsFile* results = nullptr;
  std::string config_ini;  // the run's configuration
  std::string started_at;  // the results file's started_at
};

// Saves every rank's state after `rounds_complete` rounds. `time_ns`: rank 0's run time
// now; `elapsed_ns`: time since the run's links started. `target` is read on rank 0 only.
// Returns the seconds it took on rank 0 (0 elsewhere).
double write_checkpoint(train::Method& method, int rounds_complete, std::int64_t time_ns, std::int64_t elapsed_ns,
                        const CheckpointTarget& target, MPI_Comm control);

// Where a resumed run continues; the same on every rank except `keep` (rank 0's).
struct ResumePoint {
  bool from_checkpoint = false;  // false: there is none, the run starts over at round 0
  int rounds_complete = 0;       // the run continues with this round (0-based)
  std::int64_t time_ns = 0;      // rank 0's run time when the checkpoint was taken
  std::int64_t elapsed_ns = 0;   // time since the links started, then
  std::string written_at;        // when the checkpoint was written (rank 0)
  trace::RowCounts keep;         // rows of the results file to keep (rank 0)
};

// Loads the checkpoint next to `results_path` (rank 0 reads it and sends each rank its
// piece) into every rank's `method`. Without a checkpoint file the run starts over: the
// methods' freshly made state is the state before round 1, and no row is kept. Throws
// ConfigError (agreed by all ranks) for a checkpoint of another run (`started_at`, the
// results file's, differs) or of another rank count.
ResumePoint load_checkpoint(train::Method& method, const std::string& results_path, const std::string& started_at,
                            int mpi_size, MPI_Comm control);

}  // namespace cmlbed::run
