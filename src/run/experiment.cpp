#include "cmlbed/run/experiment.hpp"

// A run's phases (run_state.hpp), in order, and the results file's root attributes.
#include <optional>
#include <string>
#include <vector>

#include "cmlbed/base/heap_policy.hpp"
#include "cmlbed/config/method_columns.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/trace/startup_clock.hpp"
#include "cmlbed/version.hpp"
#include "round_loop.hpp"

namespace cmlbed::run {

trace::RunInfo run_info(const Settings& settings, const RunStamp& started, int mpi_size,
                        std::vector<std::string> hosts,
                        const std::vector<net::ClockEstimate>& clocks) {
  trace::RunInfo info;
  info.config_ini = settings.config().to_ini();
  info.cmlbed_version = kVersion;
  info.git_revision = kGitRevision;
  info.method = settings.experiment.method;
  info.method_table = method_table_json().dump();
  info.started_at = started.iso;
  info.heap = heap_policy();
  info.model_file_sha256 = model::model_file_sha256(model_file_options(settings));
  info.mpi_size = mpi_size;
  info.hosts = std::move(hosts);
  for (const auto& clock : clocks) {
    info.clock_offsets_ns.push_back(clock.offset_ns);
    info.clock_uncertainty_ns.push_back(clock.uncertainty_ns);
  }
  return info;
}

RunState::RunState(const Settings& run_settings, const net::MpiSession& session, std::string file, RunStart mode)
    : settings(run_settings),
      mpi(session),
      output_file(std::move(file)),
      rank(session.rank()),
      devices(session.size() - 1),
      is_server(rank == 0),
      resuming(mode == RunStart::resume),
      rounds(static_cast<int>(run_settings.experiment.rounds)),
      compute_threads(static_cast<int>(is_server ? run_settings.train.server_threads : run_settings.train.device_threads)),
      comm(session.comm()),
      control(comm) {}

RoundContext RunState::context_of(int round) const {
  RoundContext context = *context_template;
  context.round = round;
  return context;
}

int run_experiment(const Settings& settings, const net::MpiSession& mpi, const std::string& output_file,
                   const RunStamp& started, RunStart mode,
                   const std::function<void(trace::ResultsFile&)>& on_created, train::PlanChanges* replanner) {
  RunState run(settings, mpi, output_file, mode);
  model::set_intra_op_threads(run.compute_threads);
  trace::startup_clock().end(trace::StartupPhase::libtorch);
  start_or_resume(run, started, on_created, replanner != nullptr);
  set_up(run);
  std::optional<ReplanHook> replan;
  if (replanner != nullptr) replan.emplace(*replanner);
  ProgressPrinter progress;
  Checkpointer checkpointer(run);
  std::vector<RoundHook*> hooks;  // in this order: a re-plan's row, the line, the checkpoint
  if (replan) hooks.push_back(&*replan);
  hooks.push_back(&progress);
  hooks.push_back(&checkpointer);
  const Stop stop = run_rounds(run, hooks);
  return finish(run, stop, checkpointer);
}

}  // namespace cmlbed::run
