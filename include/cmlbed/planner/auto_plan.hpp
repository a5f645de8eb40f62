#pragma once
// `model.split = auto` / `pipar.micro_batches = auto` in `cmlbed run`: before round 1
// the ranks profile (or read plan.profile), rank 0 searches every candidate with the
// schedule simulator (planner::search_plan), and the typed Plan replaces the autos
// (with_plan), so that the run and the configuration stored in its results file hold
// real values.
#include <optional>
#include <vector>

#include "cmlbed/config/settings.hpp"
#include "cmlbed/net/placement.hpp"
#include "cmlbed/sim/profile.hpp"
#include "cmlbed/planner/plan_table.hpp"
#include "cmlbed/planner/parameter_search.hpp"

namespace cmlbed::planner {

// ConfigError when plan.replan asks to re-plan settings with nothing auto (e.g. those
// stored in a results file, which hold the first plan's values).
void refuse_replan_without_auto(const Settings& settings, int devices);

// The planner's choice: the best uniform pair, then each device's own (index d-1).
struct Plan {
  std::size_t split = 0;
  int micro_batches = 1;
  std::vector<train::DeviceChoice> devices;
};

struct AutoChoice {
  Settings settings = Settings::defaults();  // the run's: the plan in place of the autos
  Plan plan;
  PlanTable table;  // for the results file
  // For re-planning (plan.replan): what the planner may choose per device, and the
  // profile it planned from (rank 0).
  std::vector<DeviceFreedom> freedom;
  sim::Profile profile;
  // plan.host_cores = placement resolved from where MPI placed the ranks (plan_spec).
  std::optional<int> placement_cores;
};

// `settings` with the plan in place of their autos: global autos take the best uniform
// pair, a device its own choice (Settings::with_chosen).
Settings with_plan(const Settings& settings, const Plan& plan);

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
// method with nothing to choose). `settings` hold the autos, validated.
AutoChoice choose_auto(const Settings& settings, int devices, bool is_server, MPI_Comm comm);

// The same choice in one process, from a profile at hand (`cmlbed simulate`): no MPI.
AutoChoice choose_auto_from(const Settings& settings, const sim::Profile& profile, int devices);

}  // namespace cmlbed::planner
