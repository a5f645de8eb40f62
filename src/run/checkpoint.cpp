#include "cmlbed/run/checkpoint.hpp"
#include "cmlbed/run/checkpoint_table.hpp"

#include <chrono>
#include <filesystem>
#include <optional>

#include "cmlbed/base/run_stamp.hpp"
#include "cmlbed/base/seed_streams.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/net/gather.hpp"
#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/mpi_session.hpp"
#include "cmlbed/trace/checkpoint_file.hpp"
#include "cmlbed/train/state_archive.hpp"

namespace cmlbed::run {
namespace {

// This rank's piece: the round count (a check against mixing pieces), LibTorch's default
// generator and the method's own state.
std::string save_rank_state(train::Method& method, int rounds_complete) {
  torch::serialize::OutputArchive archive;
  archive.write("rounds_complete", c10::IValue(static_cast<std::int64_t>(rounds_complete)));
  train::save_default_generator(archive, "generator");
  torch::serialize::OutputArchive method_state(archive.compilation_unit());
  method.save_state(method_state);
  archive.write("method", method_state);
  return train::archive_bytes(archive);
}

void load_rank_state(train::Method& method, const std::string& bytes, int rounds_complete, int rank) {
  torch::serialize::InputArchive archive;
  train::load_archive_bytes(archive, bytes);
  c10::IValue rounds;
  archive.read("rounds_complete", rounds);
  if (rounds.toInt() != rounds_complete) {
    throw std::runtime_error("checkpoint: rank " + std::to_string(rank) + "'s state is after " +
                             std::to_string(rounds.toInt()) + " rounds, the checkpoint's after " +
                             std::to_string(rounds_complete));
  }
  train::load_default_generator(archive, "generator");
  torch::serialize::InputArchive method_state;
  archive.read("method", method_state);
  method.load_state(method_state);
}

}  // namespace

double write_checkpoint(train::Method& method, int rounds_complete, std::int64_t time_ns, std::int64_t elapsed_ns,
                        const CheckpointTarget& target, MPI_Comm control) {
  const auto start = std::chrono::steady_clock::now();
  const std::string mine = save_rank_state(method, rounds_complete);
  if (net::comm_rank(control) != 0) {
    net::gather_blobs(mine, control, nullptr);
    return 0;
  }
  trace::ResultsFile& results = *target.results;
  const trace::RowCounts rows = results.row_counts();
  trace::CheckpointInfo info;
  info.rounds_complete = rounds_complete;
  info.seed_rule = kSeedRule;
  info.mpi_size = results.mpi_size();
  info.config_ini = target.config_ini;
  info.started_at = target.started_at;
  info.round_rows = rows.rounds;
  info.event_rows = rows.events;
  info.time_ns = time_ns;
  info.elapsed_ns = elapsed_ns;
  info.written_at = now_stamp().iso;
  const std::string path = trace::checkpoint_path(results.path());
  trace::CheckpointWriter writer(path, info);
  net::gather_blobs(mine, control, [&](int rank, const std::string& bytes) { writer.add_state(rank, bytes); });
  const std::uint64_t bytes = writer.commit();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  record_checkpoint(results, {rounds_complete, static_cast<std::int64_t>(bytes), seconds},
                            std::filesystem::path(path).filename().string());
  results.flush();
  return seconds;
}

ResumePoint load_checkpoint(train::Method& method, const std::string& results_path, const std::string& started_at,
                            int mpi_size, MPI_Comm control) {
  const bool is_server = net::comm_rank(control) == 0;
  ResumePoint point;
  std::optional<trace::CheckpointReader> reader;
  std::optional<std::string> error;
  if (is_server) {
    const std::string path = trace::checkpoint_path(results_path);
    try {
      if (std::filesystem::exists(path)) {
        reader.emplace(path);
        const trace::CheckpointInfo& info = reader->info();
        if (info.started_at != started_at) {
          error = "the checkpoint " + path + " belongs to another run (started " + info.started_at + ", " +
                  results_path + " " + started_at + "); remove it to start over";
        } else if (info.mpi_size != mpi_size) {
          error = "the checkpoint " + path + " has " + std::to_string(info.mpi_size) + " ranks, the run " +
                  std::to_string(mpi_size);
        } else if (info.seed_rule != kSeedRule) {
          error = "the checkpoint " + path + " was written by a cmlbed that drew its random streams by seed rule " +
                  std::to_string(info.seed_rule) + ", this one by rule " + std::to_string(kSeedRule) +
                  " (docs/explanation/seeds.md): its remaining rounds would draw other batches, noise and "
                  "masks; finish it with the cmlbed that started it, or start the run anew";
        } else {
          point.from_checkpoint = true;
          point.rounds_complete = info.rounds_complete;
          point.time_ns = info.time_ns;
          point.elapsed_ns = info.elapsed_ns;
          point.written_at = info.written_at;
          point.keep.rounds = info.round_rows;
          point.keep.events = info.event_rows;
        }
      } else {
        point.keep.events.assign(static_cast<std::size_t>(mpi_size), 0);
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  error = net::agree_on_error(error, control);
  if (error) throw ConfigError(*error);

  std::int64_t shared[4] = {point.from_checkpoint ? 1 : 0, point.rounds_complete, point.time_ns, point.elapsed_ns};
  CMLBED_MPI_CHECK(MPI_Bcast(shared, 4, MPI_INT64_T, 0, control));
  point.from_checkpoint = shared[0] != 0;
  point.rounds_complete = static_cast<int>(shared[1]);
  point.time_ns = shared[2];
  point.elapsed_ns = shared[3];
  if (!point.from_checkpoint) return point;
  const std::string mine = net::scatter_blobs(control, [&](int rank) { return reader->state(rank); });
  load_rank_state(method, mine, point.rounds_complete, net::comm_rank(control));
  return point;
}

}  // namespace cmlbed::run
