// What a resumed run needs from the trace layer: the checkpoint side file (every rank's
// state, replaced atomically, a killed writer leaves the previous checkpoint) and a
// results file reopened at a checkpoint (rows after it dropped, the end marks gone,
// new rows appended after the kept ones).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cmlbed/run/checkpoint_table.hpp"
#include "cmlbed/trace/checkpoint_file.hpp"
#include "cmlbed/trace/round_columns.hpp"
#include "cmlbed/trace/hdf5_handles.hpp"
#include "cmlbed/trace/results_file.hpp"

namespace cmlbed::trace {
namespace {

namespace fs = std::filesystem;
constexpr int kRanks = 3;

CheckpointInfo sample_info(int rounds) {
  CheckpointInfo info;
  info.rounds_complete = rounds;
  info.mpi_size = kRanks;
  info.config_ini = "[experiment]\nrounds = 6\n";
  info.started_at = "2026-12-01T10:00:00Z";
  info.round_rows = static_cast<std::uint64_t>(rounds);
  info.event_rows = {10u * rounds, 20u * rounds, 0};
  info.time_ns = 123456789012345 + rounds;
  info.elapsed_ns = 987654321LL * rounds;  // int would overflow from round 3 (UBSan)
  info.written_at = "2026-12-01T10:05:00Z";
  return info;
}

// Rank r's state after `rounds` rounds: distinct bytes, NULs included, sizes that differ.
std::string sample_state(int rank, int rounds) {
  std::string bytes(static_cast<std::size_t>(1000 * rank + 17), '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 31 + rank + 7 * rounds) % 256);
  return bytes;
}

void write_checkpoint_file(const std::string& path, int rounds) {
  CheckpointWriter writer(path, sample_info(rounds));
  for (int rank = kRanks - 1; rank >= 0; --rank) writer.add_state(rank, sample_state(rank, rounds));
  writer.commit();
}

void expect_checkpoint(const std::string& path, int rounds) {
  const CheckpointReader reader(path);
  const CheckpointInfo& info = reader.info();
  const CheckpointInfo want = sample_info(rounds);
  EXPECT_EQ(info.rounds_complete, want.rounds_complete);
  EXPECT_EQ(info.mpi_size, want.mpi_size);
  EXPECT_EQ(info.config_ini, want.config_ini);
  EXPECT_EQ(info.started_at, want.started_at);
  EXPECT_EQ(info.round_rows, want.round_rows);
  EXPECT_EQ(info.event_rows, want.event_rows);
  EXPECT_EQ(info.time_ns, want.time_ns);
  EXPECT_EQ(info.elapsed_ns, want.elapsed_ns);
  EXPECT_EQ(info.written_at, want.written_at);
  for (int rank = 0; rank < kRanks; ++rank) EXPECT_EQ(reader.state(rank), sample_state(rank, rounds)) << rank;
}

RunInfo sample_run_info() {
  RunInfo info;
  info.config_ini = "[experiment]\nrounds = 4\n";
  info.cmlbed_version = "0.1.0";
  info.git_revision = "test";
  info.method = "sfl";
  info.started_at = "2026-12-01T10:00:00Z";
  info.mpi_size = kRanks;
  info.hosts.assign(kRanks, "host");
  info.clock_offsets_ns.assign(kRanks, 0);
  info.clock_uncertainty_ns.assign(kRanks, 0);
  return info;
}

RoundRecord sample_round(int round, double accuracy) {
  RoundRecord record;
  record.round = round;
  record.t_start_ns = 1000 * round;
  record.t_end_ns = 1000 * round + 900;
  record.wall_s = 0.5 + round;
  record.test_accuracy = accuracy;
  record.busy_s.assign(kRanks, 0.1);
  record.idle_s.assign(kRanks, 0.4);
  record.flops.assign(kRanks, 1e9);
  record.device_accuracy.assign(kRanks, std::nan(""));
  record.mask_sparsity.assign(kRanks, std::nan(""));
  cmlbed::trace::fill_unmeasured(record, kRanks);
  return record;
}

std::vector<Event> events_of(int rank, int round) {
  std::vector<Event> events(static_cast<std::size_t>(rank + 1));
  for (Event& event : events) {
    event.round = round;
    event.kind = EventKind::forward;
    event.t_start_ns = 1000 * round;
    event.t_end_ns = 1000 * round + 10;
  }
  return events;
}

class CheckpointFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "cmlbed_checkpoint_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST_F(CheckpointFileTest, WritesEveryRanksStateAndReadsItBack) {
  const std::string path = checkpoint_path(file("run.h5"));
  EXPECT_EQ(path, file("run.h5.ckpt"));
  write_checkpoint_file(path, 2);
  expect_checkpoint(path, 2);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  write_checkpoint_file(path, 3);  // replaces it
  expect_checkpoint(path, 3);
  remove_checkpoint(path);
  EXPECT_FALSE(fs::exists(path));
  remove_checkpoint(path);  // nothing there: no error
}

TEST_F(CheckpointFileTest, AWriterThatDoesNotCommitLeavesThePreviousCheckpoint) {
  const std::string path = file("run.h5.ckpt");
  write_checkpoint_file(path, 2);
  {
    CheckpointWriter writer(path, sample_info(3));
    writer.add_state(0, sample_state(0, 3));
    EXPECT_THROW(writer.commit(), std::logic_error);  // ranks 1 and 2 are missing
  }
  expect_checkpoint(path, 2);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

// A process killed while writing (mpirun kills ranks a second after forwarding SIGTERM)
// leaves the previous checkpoint whole, and the next writer replaces its temporary file.
TEST_F(CheckpointFileTest, AWriterKilledMidWayLeavesThePreviousCheckpoint) {
  const std::string path = file("run.h5.ckpt");
  write_checkpoint_file(path, 2);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      CheckpointWriter writer(path, sample_info(3));
      writer.add_state(0, std::string(8 << 20, 'x'));
      std::raise(SIGKILL);
    } catch (...) {
    }
    ::_exit(3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_TRUE(fs::exists(path + ".tmp"));
  expect_checkpoint(path, 2);
  write_checkpoint_file(path, 3);
  expect_checkpoint(path, 3);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST_F(CheckpointFileTest, RefusesWhatIsNotACheckpoint) {
  EXPECT_THROW(CheckpointReader reader(file("missing.ckpt")), std::invalid_argument);
  const std::string results = file("run.h5");
  ResultsFile(results, false, sample_run_info()).close();
  try {
    CheckpointReader reader(results);
    ADD_FAILURE() << "a results file read as a checkpoint";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("not a cmlbed checkpoint"), std::string::npos) << e.what();
  }
  {
    std::ofstream text(file("text.ckpt"));
    text << "not HDF5\n";
  }
  EXPECT_THROW(CheckpointReader reader(file("text.ckpt")), std::invalid_argument);
}

// A run wrote 3 rounds, interrupted, with its checkpoint after round 2: the resumed run
// keeps rounds 1-2 and their events, and appends its own after them.
TEST_F(CheckpointFileTest, ReopenedResultsFileContinuesAfterTheCheckpoint) {
  const std::string path = file("run.h5");
  RowCounts at_checkpoint;
  {
    ResultsFile results(path, false, sample_run_info());
    for (int round = 0; round < 3; ++round) {
      for (int rank = 0; rank < kRanks; ++rank) results.append_events(rank, events_of(rank, round));
      results.append_round(sample_round(round, 0.1 * (round + 1)));
      results.set_summary({{"rounds", round + 1.0}});
      if (round == 1) at_checkpoint = results.row_counts();
    }
    run::record_checkpoint(results, {2, 4096, 0.25}, "run.h5.ckpt");
    results.write_model("model", {1.0f, 2.0f});
    results.mark_interrupted("SIGTERM", 3);
    results.close();
  }
  EXPECT_EQ(at_checkpoint.rounds, 2u);
  EXPECT_EQ(at_checkpoint.events, (std::vector<std::uint64_t>{2, 4, 6}));
  {
    ResultsFile results = ResultsFile::reopen(path, at_checkpoint, 2, "[experiment]\nrounds = 5\n");
    EXPECT_EQ(results.row_counts().rounds, 2u);
    for (int rank = 0; rank < kRanks; ++rank) results.append_events(rank, events_of(rank, 2));
    results.append_round(sample_round(2, 0.7));
    run::record_checkpoint(results, {3, 4096, 0.5}, "run.h5.ckpt");
    results.close();
  }
  const auto rounds = ResultsFile::read_rounds(path);
  ASSERT_EQ(rounds.size(), 3u);
  for (int round = 0; round < 3; ++round) EXPECT_EQ(rounds[static_cast<std::size_t>(round)].round, round);
  EXPECT_DOUBLE_EQ(rounds[1].test_accuracy, 0.2);
  EXPECT_DOUBLE_EQ(rounds[2].test_accuracy, 0.7);  // the new round 3, not the dropped one
  for (int rank = 0; rank < kRanks; ++rank) {
    const auto events = ResultsFile::read_events(path, rank);
    ASSERT_EQ(events.size(), static_cast<std::size_t>(3 * (rank + 1))) << rank;
    EXPECT_EQ(events.back().round, 2);
  }
  EXPECT_TRUE(ResultsFile::read_summary(path).empty());
  EXPECT_EQ(ResultsFile::read_string_attribute(path, "config"), "[experiment]\nrounds = 5\n");
  EXPECT_THROW(ResultsFile::read_string_attribute(path, "interrupted"), Hdf5Error);
  EXPECT_THROW(ResultsFile::read_model(path, "model"), Hdf5Error);
  const auto checkpoints = run::read_checkpoints(path);
  ASSERT_EQ(checkpoints.size(), 2u);
  EXPECT_EQ(checkpoints[1].rounds, 3);
  EXPECT_EQ(checkpoints[1].bytes, 4096);
  EXPECT_DOUBLE_EQ(checkpoints[1].seconds, 0.5);
  EXPECT_EQ(ResultsFile::read_string_attribute(path, "checkpoint_file"), "run.h5.ckpt");
  const hdf5::FileHandle handle = hdf5::owned<hdf5::FileHandle>(
      H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen");
  std::int32_t checkpoint_rounds = 0, resumed_after = 0;
  hdf5::read_attribute(handle.get(), "checkpoint_rounds", H5T_NATIVE_INT32, &checkpoint_rounds, 1, path);
  hdf5::read_attribute(handle.get(), "resumed_after_rounds", H5T_NATIVE_INT32, &resumed_after, 1, path);
  EXPECT_EQ(checkpoint_rounds, 3);
  EXPECT_EQ(resumed_after, 2);
}

TEST_F(CheckpointFileTest, ReopenRefusesACheckpointWithMoreRowsThanTheFile) {
  const std::string path = file("run.h5");
  {
    ResultsFile results(path, false, sample_run_info());
    results.append_round(sample_round(0, 0.1));
    results.close();
  }
  RowCounts keep{2, {0, 0, 0}};
  EXPECT_THROW(ResultsFile::reopen(path, keep, 2, ""), std::invalid_argument);
  keep = {1, {0, 0}};  // two ranks
  EXPECT_THROW(ResultsFile::reopen(path, keep, 1, ""), std::invalid_argument);
  EXPECT_EQ(ResultsFile::read_rounds(path).size(), 1u);
}

}  // namespace
}  // namespace cmlbed::trace
