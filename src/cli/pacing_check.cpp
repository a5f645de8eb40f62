#include "pacing_check.hpp"

#include <iostream>

#include "cmlbed/config/config_error.hpp"
#include "cmlbed/net/mpi_session.hpp"
#include "cmlbed/planner/capacity_check.hpp"
#include "cmlbed/planner/profiler.hpp"
#include "cmlbed/planner/simulation_setup.hpp"

namespace cmlbed::cli {

void check_pacing_before_run(const Settings& settings, int devices, bool is_server, std::optional<int> placement_cores,
                             const sim::Profile* profile, bool alone) {
  const std::string mode = settings.plan.check_pacing;
  if (mode == "off") return;
  std::optional<std::string> refusal;
  if (is_server) {
    try {
      const auto spec_of = [&](int n) { return planner::plan_spec(settings, n, placement_cores); };
      const planner::PlanSpec spec = spec_of(devices);
      if (planner::any_device_held(spec)) {
        sim::Profile own;
        if (profile == nullptr) {
          // A quick profile (1 + 3 runs per figure) of the server's and a device's stages,
          // the other ranks waiting.
          planner::ProfilerSettings quick;
          quick.warmup = 1;
          quick.repeats = 3;
          quick.check_interpolation = false;
          own = planner::profile_in_process(planner::plan_spec(settings, 1, placement_cores), quick);
        }
        const planner::PacingCheck check = planner::check_pacing(
            spec_of, [&](int n) { return planner::device_sample_counts(settings, n); },
            profile != nullptr ? *profile : own, devices);
        std::cout << "emulation check: " << check.text() << "; " << spec.host_text << std::endl;
        if (mode == "strict" && !check.keeps_pace()) {
          refusal = "plan.check_pacing = strict (--strict-emulation): " + check.text();
        }
      }
    } catch (const std::exception& e) {
      // A run the simulator cannot predict is not refused for that, unless asked to be.
      std::cout << "emulation check: not done: " << e.what() << std::endl;
      if (mode == "strict") refusal = std::string("plan.check_pacing = strict: no prediction: ") + e.what();
    }
  }
  if (!alone) refusal = net::agree_on_error(refusal, MPI_COMM_WORLD);
  if (refusal) throw ConfigError(*refusal);
}

}  // namespace cmlbed::cli
