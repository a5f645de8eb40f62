#pragma once
// What `cmlbed simulate` and `cmlbed plan` share: their options (--config, --profile,
// --devices), the configuration they resolve and the profile they use.
#include <boost/program_options/options_description.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cmlbed/config/config.hpp"
#include "cmlbed/plan/profile.hpp"

namespace cmlbed::cli {

struct SimulateArguments {
  std::string config_file;
  std::string profile_file;
  std::optional<int> devices;  // --devices N, else the config's '# ranks: R' header, R-1
  bool help = false;
  std::vector<RawSetting> settings;
};

boost::program_options::options_description simulate_options(const std::string& command);

// Throws ConfigError (prefixed with `command`) for bad arguments or an unknown device count.
SimulateArguments parse_simulate_arguments(const std::string& command, int argc, const char* const* argv);

// The configuration, with output.file defaulting to results/<method>-simulated-<stamp>.h5,
// checked for the arguments' device count (ConfigError). `auto` options: placeholders for
// `plan` (it searches them all), a ConfigError for `simulate`.
Config simulation_config(SimulateArguments& args, const std::string& stamp, bool check_output,
                         const std::string& command);

// --profile's profile (ConfigError naming the file when it cannot be read), or one
// measured here, in-process, as the server and as device 1 (said on stdout).
plan::Profile simulation_profile(const Config& config, const SimulateArguments& args, const std::string& command);

// Runs a command that needs no MPI: its exit status, or 2 after printing a ConfigError
// ("cmlbed: error: ..."), 1 after any other exception ("cmlbed: failed: ...").
int report_errors(const std::function<int()>& command);

}  // namespace cmlbed::cli
