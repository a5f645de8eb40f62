#pragma once
// The checkpoint of a run: what every rank needs to continue after a completed round
// (`cmlbed run --resume`), in a side file next to the results file, `<results>.ckpt`.
// Rank 0 writes it from every rank's state (an opaque byte string per rank; the train
// layer makes them) and replaces it atomically: the new checkpoint goes to
// `<results>.ckpt.tmp`, is synced to disk and renamed over the old one. So the side file
// is always one complete checkpoint, with every rank's piece of the same round; a
// process killed while writing leaves the previous one. Layout: docs/reference/results-format.md.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cmlbed::trace {

struct CheckpointInfo {
  int rounds_complete = 0;  // the state is the one after this many rounds
  int mpi_size = 0;
  // The results file's own attributes, so that a checkpoint is never applied to
  // another run's file.
  std::string config_ini;
  std::string started_at;
  // Rows the results file held when the state was taken: a resumed run drops the rows
  // after them (rounds run again after the checkpoint).
  std::uint64_t round_rows = 0;
  std::vector<std::uint64_t> event_rows;  // per rank
  std::int64_t time_ns = 0;     // the run's time base (rank 0's clock) when it was taken
  std::int64_t elapsed_ns = 0;  // time since the run's links started (rate traces)
  std::string written_at;       // ISO 8601 UTC
  // The seed rule its run drew from (kSeedRule, base/seed_streams.hpp); 1 for a
  // checkpoint written before the attribute existed.
  int seed_rule = 1;
};

// `<results_path>.ckpt`.
std::string checkpoint_path(const std::string& results_path);

// Removes a checkpoint and a leftover temporary file of it, if present (a new run in the
// place of an old results file must not inherit the old run's checkpoint).
void remove_checkpoint(const std::string& path);

class CheckpointWriter {
 public:
  // Creates `<path>.tmp` (replacing a leftover one) holding `info`. Throws Hdf5Error.
  CheckpointWriter(const std::string& path, const CheckpointInfo& info);
  // Without commit(): closes and removes the temporary file; `path` is untouched.
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Stores rank `rank`'s state (each rank once, any order).
  void add_state(int rank, const std::string& bytes);
  // Checks that every rank's state is there, closes the file, syncs it, renames it to
  // `path` and syncs the directory. Returns the bytes of the states stored.
  std::uint64_t commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class CheckpointReader {
 public:
  // Opens a checkpoint read-only; throws std::invalid_argument (one line) when `path`
  // does not exist or is not a cmlbed checkpoint, Hdf5Error when HDF5 fails.
  explicit CheckpointReader(const std::string& path);
  ~CheckpointReader();
  CheckpointReader(const CheckpointReader&) = delete;
  CheckpointReader& operator=(const CheckpointReader&) = delete;

  const CheckpointInfo& info() const;
  std::string state(int rank) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cmlbed::trace
