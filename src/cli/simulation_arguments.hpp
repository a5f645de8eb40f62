#pragma once
// What `cmlbed simulate` and `cmlbed plan` share: their options (--config, --profile,
// --devices), the configuration they resolve and the profile they use.
#include <boost/program_options/options_description.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cmlbed/config/config.hpp"
#include "cmlbed/sim/profile.hpp"
#include "cmlbed/trace/results_file.hpp"
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
  // The command line as given when it or the file asks for `auto` (settings then holds
  // placeholders: simulation_config); empty otherwise.
  std::optional<std::vector<RawSetting>> auto_settings;
  // The INI file's settings, read once (simulation_config), used by every later step.
  std::optional<std::vector<RawSetting>> file_settings;
};

boost::program_options::options_description simulate_options(const std::string& command);

// Throws ConfigError (prefixed with `command`) for bad arguments or an unknown device count.
SimulateArguments parse_simulate_arguments(const std::string& command, int argc, const char* const* argv);

// The configuration, with output.file defaulting to results/<method>-simulated-<stamp>.h5,
// checked for the arguments' device count (ConfigError). `auto` options: placeholders
// (split 1, 1 micro-batch), the command line as given kept in args.auto_settings: `plan`
// searches them all, `simulate` plans them (simulation_choice) and resolves again.
Config simulation_config(SimulateArguments& args, const std::string& stamp, bool check_output);

// --profile's profile (ConfigError naming the file when it cannot be read), or one
// measured here, in-process, as the server and as device 1 (said on stdout).
sim::Profile simulation_profile(const Config& config, const SimulateArguments& args, const std::string& command);

// The configuration with every auto replaced by the planner's choice from `profile`
// (one line per device on stdout, as `cmlbed run` prints them) and that choice, whose
// table goes into the results file; the probe config itself without autos. With autos,
// also what the planner may choose per device and the plan per device (for re-planning).
struct SimulationChoice {
  Config config;
  std::optional<trace::ResultsFile::PlanTable> table;
  std::vector<planner::DeviceFreedom> freedom;
  std::vector<train::DeviceChoice> plan;
};
SimulationChoice simulation_choice(const Config& probe, const sim::Profile& profile, SimulateArguments& args,
                                   const std::string& stamp);

// Runs a command that needs no MPI: its exit status, or 2 after printing a ConfigError
// ("cmlbed: error: ..."), 1 after any other exception ("cmlbed: failed: ...").
int report_errors(const std::function<int()>& command);

}  // namespace cmlbed::cli
