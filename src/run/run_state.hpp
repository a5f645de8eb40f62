#pragma once
// One run as it passes through its phases (run_experiment, experiment.cpp):
//   start_or_resume  the method, checkpoint policy, a resume point, clocks, the results file
//   set_up           links, transport, the round context, re-scoring a cut-short round
//   run_rounds       the rounds, each followed by the after-round hooks (round_hooks.hpp)
//   finish           a stopped run's note, or the end-of-run figures and the summary
// Each phase fills in the part of RunState it owns; later phases read it.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cmlbed/config/settings.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/net/mpi_session.hpp"
#include "cmlbed/net/transport.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "cmlbed/trace/timeline.hpp"
#include "cmlbed/run/checkpoint.hpp"
#include "cmlbed/train/evaluation.hpp"
#include "cmlbed/run/experiment.hpp"
#include "cmlbed/train/method.hpp"

namespace cmlbed::run {

// The driver runs train's methods; these are the names of theirs it uses throughout.
using train::Evaluation;
using train::EvaluationScope;
using train::Method;
using train::PlanChanges;
using train::RoundContext;

struct RunState {
  RunState(const Settings& settings, const net::MpiSession& mpi, std::string output_file, RunStart mode);

  const Settings& settings;
  const net::MpiSession& mpi;
  const std::string output_file;
  const int rank;
  const int devices;
  const bool is_server;
  const bool resuming;
  const int rounds;
  const int compute_threads;
  const MPI_Comm comm;          // the run's ranks: the methods, the data and the transport run on it
  net::DuplicatedComm control;  // barriers and gathers, never data

  // start_or_resume
  std::unique_ptr<Method> method;
  bool resumable = false;            // checkpoints written, --resume possible
  std::int64_t checkpoint_every = 0;  // rounds; 0 = never
  std::optional<ResumePoint> resume;
  std::string file_started_at;  // what ties checkpoints to the results file
  int first_round = 0;
  std::optional<trace::Timeline> timeline;
  std::vector<trace::RoundRecord> records;    // rank 0
  std::optional<trace::ResultsFile> results;  // rank 0
  std::string placement;  // rank 0: "localhost: 4 ranks on 2 cores (0-1)" (net/placement.hpp)
  double ranks_per_core = 0;  // rank 0: the most on any node

  // set_up
  std::int64_t links_start = 0;  // the links' (and the run's) time origin
  std::optional<net::Transport> transport;
  EvaluationScope scope = EvaluationScope::global;
  double flops = 0;  // this rank's, in the current round (the context counts into it)
  std::optional<RoundContext> context_template;

  RoundContext context_of(int round) const;
};

// Runs `step` where `here` holds and lets every rank agree on the first error any had:
// then all throw it as ConfigError (exit status 2 alike), or none does. `step` returns an
// error message or nothing; an exception of type E it throws becomes `prefix + what()`.
template <typename E = std::exception, typename Step>
void agree_on(const RunState& run, bool here, const std::string& prefix, Step&& step) {
  std::optional<std::string> error;
  if (here) {
    try {
      error = step();
    } catch (const E& e) {
      error = prefix + e.what();
    }
  }
  error = net::agree_on_error(error, run.control.get());
  if (error) throw ConfigError(*error);
}

// The phases, in order.
void start_or_resume(RunState& run, const RunStamp& started, const std::function<void(trace::ResultsFile&)>& on_created,
                     bool replans);
void set_up(RunState& run);

}  // namespace cmlbed::run
