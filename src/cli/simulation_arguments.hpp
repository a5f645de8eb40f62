#pragma once
// What `cmlbed simulate` and `cmlbed plan` share: their options (--config, --profile,
// --devices), the configuration they resolve and the profile they use.
#include <boost/program_options/options_description.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cmlbed/config/settings.hpp"
#include "cmlbed/sim/profile.hpp"
#include "cmlbed/planner/plan_table.hpp"
#include "cmlbed/planner/parameter_search.hpp"

namespace cmlbed::cli {

// simulate --events auto keeps every event up to this many: at 44 bytes each in the
// file, some 440 MB (events per device and round: docs/explanation/simulator.md, "Scale
// of the simulator itself").
constexpr std::int64_t kMostEventsKept = 10'000'000;

struct SimulateArguments {
  std::string config_file;
  std::string profile_file;
  std::optional<int> devices;  // --devices N, else the config's '# ranks: R' header, R-1
  std::string events = "auto";  // simulate --events: all, totals or auto (kMostEventsKept)
  bool every_candidate = false;  // plan --every-candidate: no candidate skipped by its bound
  bool help = false;
  std::vector<RawSetting> settings;
};

boost::program_options::options_description simulate_options(const std::string& command);

// Throws ConfigError (prefixed with `command`) for bad arguments or an unknown device count.
SimulateArguments parse_simulate_arguments(const std::string& command, int argc, const char* const* argv);

// The settings, with output.file defaulting to results/<method>-simulated-<stamp>.h5,
// checked for the arguments' device count (ConfigError). `auto` options stay auto: `plan`
// searches every candidate, `simulate` plans them (simulation_choice).
Settings simulation_settings(const SimulateArguments& args, const std::string& stamp, bool check_output);

// --profile's profile (ConfigError naming the file when it cannot be read), or one
// measured here, in-process, as the server and as device 1 (said on stdout).
sim::Profile simulation_profile(const Settings& settings, const SimulateArguments& args, const std::string& command);

// The settings with every auto replaced by the planner's choice from `profile` (one line
// per device on stdout, as `cmlbed run` prints them) and that choice, whose table goes
// into the results file; the settings themselves without autos. With autos, also what the
// planner may choose per device and the plan per device (for re-planning).
struct SimulationChoice {
  Settings settings;
  std::optional<planner::PlanTable> table;
  std::vector<planner::DeviceFreedom> freedom;
  std::vector<train::DeviceChoice> plan;
};
SimulationChoice simulation_choice(const Settings& settings, const sim::Profile& profile, int devices);

// Runs a command that needs no MPI: its exit status, or 2 after printing a ConfigError
// ("cmlbed: error: ..."), 1 after any other exception ("cmlbed: failed: ...").
int report_errors(const std::function<int()>& command);

}  // namespace cmlbed::cli
