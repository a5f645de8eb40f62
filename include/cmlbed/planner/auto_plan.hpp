#pragma once
// `model.split = auto` / `pipar.micro_batches = auto` in `cmlbed run`: before round 1
// the ranks profile (or read plan.profile), rank 0 searches every candidate with the
// schedule simulator (planner::search_plan), and the choice replaces the autos, so that the
// run, its checks and the configuration stored in its results file hold real values.
#include <optional>
#include <vector>

#include "cmlbed/config/config.hpp"
#include "cmlbed/net/placement.hpp"
#include "cmlbed/sim/profile.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "cmlbed/planner/parameter_search.hpp"

namespace cmlbed::planner {

// Whether any setting (global or in a [device.K] section) asks for auto.
bool wants_auto(const std::vector<RawSetting>& file_settings, const std::vector<RawSetting>& cli_settings);

// The settings with every auto replaced by `placeholder` values that pass the checks
// (split 1, 1 micro-batch), to check everything else before profiling.
std::vector<RawSetting> with_autos_replaced(const std::vector<RawSetting>& file_settings,
                                            const std::vector<RawSetting>& cli_settings, std::int64_t split,
                                            std::int64_t micro_batches);

// ConfigError when plan.replan asks to re-plan a configuration with nothing auto (e.g.
// one stored in a results file, which holds the first plan's values).
void refuse_replan_without_auto(const Config& config);

struct AutoChoice {
  std::vector<RawSetting> cli_settings;  // the command line with the choice in place of the autos
  trace::ResultsFile::PlanTable table;   // for the results file
  // For re-planning (plan.replan): what the planner may choose per device, the plan per
  // device (every rank), and the profile it planned from (rank 0).
  std::vector<DeviceFreedom> freedom;
  std::vector<train::DeviceChoice> plan;
  sim::Profile profile;
  // plan.host_cores = placement resolved from where MPI placed the ranks (plan_spec).
  std::optional<int> placement_cores;
};

// Where a run's ranks sit (rank 0 holds the list; the others an empty one) and the cores
// plan.host_cores = placement gives the planner's simulator for it (placement_host_cores),
// the same on every rank. Collective over `comm`.
struct RunPlacement {
  std::vector<net::NodeShare> nodes;
  int cores = 0;
};
RunPlacement run_placement(MPI_Comm comm);

// Collective over `comm`, the run's ranks: profiles (unless plan.profile names a profile), plans on
// rank 0 (with plan.replan = on_change, for the links' rates at the start, held), prints
// one line per device there, and returns the same choice on every rank (ConfigError for a
// method with nothing to choose).
// `probe` is the configuration with placeholders (with_autos_replaced).
AutoChoice choose_auto(const Config& probe, const std::vector<RawSetting>& file_settings,
                       const std::vector<RawSetting>& cli_settings, int devices, bool is_server, MPI_Comm comm);

// The same choice in one process, from a profile at hand (`cmlbed simulate`): no MPI.
AutoChoice choose_auto_from(const Config& probe, const sim::Profile& profile,
                            const std::vector<RawSetting>& file_settings, const std::vector<RawSetting>& cli_settings,
                            int devices);

}  // namespace cmlbed::planner
