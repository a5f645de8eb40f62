#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cmlbed/base/run_stamp.hpp"
#include "cmlbed/config/settings.hpp"
#include "cmlbed/net/clock_sync.hpp"
#include "cmlbed/net/mpi_session.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "cmlbed/train/plan_changes.hpp"

namespace cmlbed::run {

using cmlbed::now_stamp;
using cmlbed::RunStamp;

// The root attributes of a run's results file. A simulated run (`cmlbed simulate`) has
// no hosts and zero clock offsets.
trace::RunInfo run_info(const Settings& settings, const RunStamp& started, int mpi_size,
                        std::vector<std::string> hosts, const std::vector<net::ClockEstimate>& clocks);

// How a run begins: with a new results file, or continuing an existing one after its
// last checkpoint (`cmlbed run --resume`; see checkpoint.hpp).
enum class RunStart { fresh, resume };

// Runs a validated configuration on every rank: clock sync, links, transport, the
// method's rounds, per-round event gathering, the results file (rank 0, appended and
// flushed each round), checkpoints (output.checkpoint), progress lines and the summary.
// Returns the exit status. `output_file` is the resolved output path (used on rank 0);
// resuming, it is the file to continue, and `config` the configuration it stores (with
// the overrides a resumed run allows).
// `on_created` (rank 0): called once the results file exists, or is reopened by a resumed
// run, to add what came before the run (the planner's choice) or depends on its
// configuration as it now is (the privacy figure over its rounds).
// `replanner` (plan.replan = on_change): asked after every round's evaluation whether to
// change the plan (plan_changes.hpp); a run that re-plans writes no checkpoints.
int run_experiment(const Settings& settings, const net::MpiSession& mpi, const std::string& output_file,
                   const RunStamp& started, RunStart mode = RunStart::fresh,
                   const std::function<void(trace::ResultsFile&)>& on_created = {},
                   train::PlanChanges* replanner = nullptr);

}  // namespace cmlbed::run
