#pragma once
// The results file's record of the checkpoints a run wrote: the table /checkpoints, one
// row per checkpoint, and the root attributes `checkpoint_rounds` and `checkpoint_file`,
// which say what `--resume` continues from (docs/reference/results-format.md).
#include <cstdint>
#include <string>
#include <vector>

#include "cmlbed/trace/results_file.hpp"

namespace cmlbed::run {

// One checkpoint written (a row of /checkpoints).
struct CheckpointRecord {
  std::int32_t rounds = 0;  // rounds complete at the checkpoint
  std::int64_t bytes = 0;   // every rank's state together
  double seconds = 0;       // from the first rank saving to the file renamed, on rank 0
};

// Appends `record` to /checkpoints (created with the first) and points the root
// attributes at it; `checkpoint_file` is the side file's name, next to the results file.
void record_checkpoint(trace::ResultsFile& results, const CheckpointRecord& record,
                       const std::string& checkpoint_file);

// The rows of /checkpoints (none when the run wrote no checkpoint).
std::vector<CheckpointRecord> read_checkpoints(const std::string& path);

}  // namespace cmlbed::run
