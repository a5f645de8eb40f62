// Phase 1 of a run (run_state.hpp): the method, the checkpoint policy, a resume point,
// the clocks and the results file, new or reopened.
#include <algorithm>
#include <iostream>

#include "cmlbed/config/methods.hpp"
#include "cmlbed/net/clock_sync.hpp"
#include "cmlbed/net/gather.hpp"
#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/placement.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/trace/checkpoint_file.hpp"
#include "cmlbed/trace/startup_clock.hpp"
#include "cmlbed/train/method_registry.hpp"
#include "cmlbed/run/resume_rules.hpp"
#include "cmlbed/train/round_report.hpp"
#include "run_state.hpp"

namespace cmlbed::run {
namespace {

// Every rank loads model.file itself: all must load the same bytes, or their parts
// would not be one model. Rank 0 names the layers whose FLOPs go uncounted. A file one
// rank cannot read is an error all ranks agree on before they exchange digests.
void check_model_file(RunState& run) {
  const model::ModelOptions model = model_file_options(run.settings);
  if (model.name != model::kTorchScript) return;
  std::string digest, note;
  agree_on<std::invalid_argument>(run, true, "", [&]() -> std::optional<std::string> {
    digest = model::model_file_sha256(model);
    if (run.is_server) note = model::uncounted_flops_note(model::layer_stats(model_options(run.settings)));
    return std::nullopt;
  });
  std::string rank0 = digest;
  rank0.resize(64);
  CMLBED_MPI_CHECK(MPI_Bcast(rank0.data(), 64, MPI_CHAR, 0, run.control.get()));
  agree_on<std::invalid_argument>(run, true, "", [&]() -> std::optional<std::string> {
    if (digest == rank0) return std::nullopt;
    return "model.file " + model.file + " on rank " + std::to_string(run.rank) + " has SHA-256 " + digest +
           ", rank 0's " + rank0 + ": every rank must load the same file";
  });
  if (!note.empty()) std::cerr << "cmlbed: note: " << note << std::endl;
}

// The method first (it loads and partitions the data), before any file exists: data
// that cannot be split as configured (more devices than samples, say) is a
// configuration error, which every rank meets alike and reports as one (exit 2).
void make_the_method(RunState& run) {
  // Before the parts are built: counting the layers draws from LibTorch's default
  // generator, which building the parts then seeds from the run's seed.
  check_model_file(run);
  agree_on<std::invalid_argument>(run, true, "", [&]() -> std::optional<std::string> {
    run.method = train::make_method(run.settings, run.rank, run.devices, run.comm);
    return std::nullopt;
  });
  trace::startup_clock().end(trace::StartupPhase::model);
}

// A re-planned run's parts no longer match its stored configuration's split points, so
// a checkpoint of it could not be loaded: it keeps none (yet).
void decide_checkpoints(RunState& run, bool replans) {
  const Settings& settings = run.settings;
  const std::string& method_name = settings.experiment.method;
  run.resumable = method_traits(method_name).checkpointable && !replans;
  run.checkpoint_every = run.resumable ? settings.output.checkpoint : 0;
  if (run.is_server && replans && settings.output.checkpoint > 0) {
    std::cerr << "cmlbed: note: plan.replan = on_change: no checkpoints are written (a re-planned run cannot be "
                 "resumed yet); every completed round is in the results file all the same" << std::endl;
  } else if (run.is_server && !run.resumable && settings.user_set(&settings.output.checkpoint) &&
             settings.output.checkpoint > 0) {
    std::cerr << "cmlbed: note: method " << method_name << " does not save checkpoints; output.checkpoint is ignored"
              << std::endl;
  }
  if (const std::vector<int> raw = devices_uploading_raw_samples(settings, run.devices); run.is_server && !raw.empty()) {
    std::cerr << "cmlbed: note: " << method_name << " at split 0 on " << raw.size() << " of " << run.devices
              << " device(s): " << kRawDataMark
              << " (every layer runs on the server: centralised training, not split learning)" << std::endl;
  }
}

// Resuming: every rank takes its state from the checkpoint (rank 0 reads the file),
// before the clocks are set and anything is timed.
void load_resume_point(RunState& run) {
  const std::string& file = run.output_file;
  if (!run.resumable) {
    throw ConfigError("cannot resume " + file + ": method " + run.settings.experiment.method +
                      " does not save checkpoints");
  }
  agree_on(run, run.is_server, "", [&]() -> std::optional<std::string> {
    run.file_started_at = trace::ResultsFile::read_string_attribute(file, "started_at");
    return std::nullopt;
  });
  // The rounds so far trained the module the run started with; another one would not
  // take their weights (or would, and continue a different model).
  agree_on(run, run.is_server, "cannot resume " + file + ": ", [&]() -> std::optional<std::string> {
    const model::ModelOptions model = model_file_options(run.settings);
    if (model.name != model::kTorchScript) return std::nullopt;
    const std::string started = trace::ResultsFile::read_string_attribute(file, "model_file_sha256");
    const std::string now = model::model_file_sha256(model);
    if (started == now) return std::nullopt;
    return "model.file " + model.file + " has changed since the run started (SHA-256 " + now + ", the run's " +
           started + "); resume with the file the run started with";
  });
  run.resume = load_checkpoint(*run.method, file, run.file_started_at, run.mpi.size(), run.control.get());
  if (run.resume->rounds_complete > run.rounds) {
    throw ConfigError("cannot resume " + file + " with experiment.rounds = " + std::to_string(run.rounds) +
                      ": its checkpoint is after round " + std::to_string(run.resume->rounds_complete));
  }
  // Another round count must not change what the rounds so far computed (the file
  // still holds the configuration of the start that ran them).
  agree_on(run, run.is_server, "cannot resume " + file + ": ", [&] {
    const Config stored =
        Config::resolve(parse_ini_settings(trace::ResultsFile::read_string_attribute(file, "config"), file), {});
    return changed_rounds_error(stored, run.settings, run.resume->rounds_complete, file);
  });
  run.first_round = run.resume->rounds_complete;
}

// The clocks agree on rank 0's time base; each rank's timeline runs on it. Returns every
// rank's clock estimate and host name (rank 0's lists) for the results file.
std::pair<std::vector<net::ClockEstimate>, std::vector<std::string>> start_clocks(RunState& run) {
  const net::ClockEstimate clock = net::synchronize_clocks(run.control.get());
  trace::startup_clock().end(trace::StartupPhase::clocks);
  trace::Timeline& timeline = run.timeline.emplace(clock.offset_ns);
  timeline.set_enabled(run.settings.output.timeline);
  // A slowdown stretches the stage's CPU time where one thread does all of its work.
  timeline.set_stretch_basis(run.compute_threads == 1 ? trace::Timeline::StretchBasis::thread_cpu
                                                      : trace::Timeline::StretchBasis::wall);
  auto clocks = net::gather_clock_estimates(clock, run.control.get());
  auto hosts = net::gather_host_names(run.control.get());
  const std::vector<net::NodeShare> placement = net::gather_placement(run.control.get());
  run.placement = net::placement_text(placement);
  run.ranks_per_core = net::most_ranks_per_core(placement);
  if (run.resume && run.resume->from_checkpoint) {
    // The run's time base goes on from the checkpoint even when this start's clock is
    // behind the one that wrote it (another node, a reboot): no event of a later round
    // is ever earlier than one of an earlier round.
    std::int64_t shift = run.is_server ? std::max<std::int64_t>(0, run.resume->time_ns - timeline.now_ns()) : 0;
    CMLBED_MPI_CHECK(MPI_Bcast(&shift, 1, MPI_INT64_T, 0, run.control.get()));
    timeline.set_offset_ns(timeline.offset_ns() + shift);
  }
  return {std::move(clocks), std::move(hosts)};
}

// Rank 0, resuming: the rows kept (read before the file is opened for writing) and the
// file reopened at the checkpoint.
trace::ResultsFile reopen_results(const std::string& path, const ResumePoint& resume, const Settings& settings,
                                  std::vector<trace::RoundRecord>& records) {
  records = trace::ResultsFile::read_rounds(path);
  if (records.size() < resume.keep.rounds) {
    throw std::invalid_argument(path + " holds " + std::to_string(records.size()) + " rounds, fewer than its checkpoint (" +
                                std::to_string(resume.keep.rounds) + ")");
  }
  records.resize(resume.keep.rounds);
  trace::ResultsFile results = trace::ResultsFile::reopen(path, resume.keep, resume.rounds_complete, settings.config().to_ini());
  if (!records.empty()) results.set_summary(train::summarize(records));
  results.flush();
  return results;
}

// What the run's figures are read against: where the ranks sit (for the emulation
// verdict's CPU figures) and the trivial rate (for every accuracy).
void write_reference_attributes(RunState& run) {
  run.results->set_root_text("emulation_placement", run.placement);
  run.results->set_root_number("ranks_per_core", run.ranks_per_core);
  const auto trivial = run.method->trivial_accuracy(train::evaluation_scope(run.settings.evaluation.scope));
  if (trivial) run.results->set_root_number("trivial_accuracy", *trivial);
}

void open_results(RunState& run, const RunStamp& started, const std::function<void(trace::ResultsFile&)>& on_created,
                  std::vector<net::ClockEstimate> clocks, std::vector<std::string> hosts) {
  if (run.is_server && !run.resuming) {
    run.results.emplace(run.output_file, run.settings.output.overwrite,
                        run_info(run.settings, started, run.mpi.size(), std::move(hosts), clocks));
    // A checkpoint next to a file this run has just replaced is another run's.
    trace::remove_checkpoint(trace::checkpoint_path(run.output_file));
    if (on_created) on_created(*run.results);
  }
  if (run.is_server && !run.resuming) write_reference_attributes(run);
  if (run.resuming) {
    agree_on(run, run.is_server, "cannot resume " + run.output_file + ": ", [&]() -> std::optional<std::string> {
      run.results.emplace(reopen_results(run.output_file, *run.resume, run.settings, run.records));
      if (on_created) on_created(*run.results);
      return std::nullopt;
    });
    if (run.is_server) {
      write_reference_attributes(run);
      std::cout << "cmlbed: resuming " << run.output_file
                << (run.resume->from_checkpoint
                        ? " after round " + std::to_string(run.first_round) + " of " + std::to_string(run.rounds) +
                              " (checkpoint of " + run.resume->written_at + ")"
                        : std::string(" from its start (no checkpoint)"))
                << std::endl;
    }
  }
  trace::startup_clock().end(trace::StartupPhase::results_file);
}

}  // namespace

void start_or_resume(RunState& run, const RunStamp& started, const std::function<void(trace::ResultsFile&)>& on_created,
                     bool replans) {
  make_the_method(run);
  decide_checkpoints(run, replans);
  run.file_started_at = started.iso;
  if (run.resuming) load_resume_point(run);
  auto [clocks, hosts] = start_clocks(run);
  open_results(run, started, on_created, std::move(clocks), std::move(hosts));
}

}  // namespace cmlbed::run
