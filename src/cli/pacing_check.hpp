#pragma once
// plan.check_pacing for `cmlbed run`: before round 1 (and in --dry-run), rank 0 predicts
// whether this host keeps the devices' pace (planner/capacity_check.hpp) and says so;
// with plan.check_pacing = strict a run it cannot keep is refused (ConfigError, exit 2).
#include <optional>

#include "cmlbed/config/settings.hpp"
#include "cmlbed/sim/profile.hpp"

namespace cmlbed::cli {

// `profile`: the planner's, where it profiled (auto); else rank 0 profiles here.
// `placement_cores`: plan.host_cores = placement resolved for the run (none: this host's
// cores, as for a dry run). Collective over MPI_COMM_WORLD unless `alone` (a dry run).
void check_pacing_before_run(const Settings& settings, int devices, bool is_server, std::optional<int> placement_cores,
                             const sim::Profile* profile, bool alone);

}  // namespace cmlbed::cli
