#pragma once
// The arguments of `cmlbed run`: its own options (--config, --dry-run, --ranks, --resume, --help)
// and the --section.key=value settings, parsed without MPI so that they can be tested
// and fuzzed (tests/fuzz/fuzz_config.cpp) without starting ranks.
#include <boost/program_options/options_description.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cmlbed/config/config.hpp"

namespace cmlbed::cli {

struct RunArguments {
  std::string config_file;
  std::string resume_file;  // --resume FILE: continue that run
  bool dry_run = false;
  bool help = false;
  bool markdown = false;             // --help --markdown: the options' reference page
  std::optional<int> ranks;          // --ranks N: plan a dry run for N ranks without mpirun
  int repeats = 1;                   // --repeats N: the run with N consecutive seeds
  std::vector<RawSetting> settings;  // --section.key=value overrides
};

// Parses a subcommand's command line: its own options (`own`) go to take_own(name,
// value) (value empty for a switch), every --section.key=value becomes a setting. Throws
// ConfigError (prefixed with `command`) for a positional argument or a malformed option.
std::vector<RawSetting> parse_command_line(
    const std::string& command, const boost::program_options::options_description& own, int argc,
    const char* const* argv, const std::function<void(const std::string& name, const std::string& value)>& take_own);

// `cmlbed run`'s own options (without the configuration options), for --help.
boost::program_options::options_description run_options();

// Throws ConfigError for anything that is not an option of the run command or of the
// configuration table (unknown configuration names are left to Config::resolve, which
// suggests the nearest one).
RunArguments parse_run_arguments(int argc, const char* const* argv);

// The number of ranks the run is checked and planned for: mpirun's, or --ranks N for a
// dry run started alone (so a 17-rank configuration can be checked without 17 processes).
// Throws ConfigError when --ranks is given without --dry-run or disagrees with mpirun.
int planned_ranks(const RunArguments& args, int mpi_size);

// --repeats N: the results file of the repeat with seed `seed`: PATH.h5 -> PATH.seedS.h5
// (any other name gets .seedS appended), so that the files of one configuration sort
// together and `cmlbed-report summary` groups them by stripping the suffix.
std::string seeded_output_path(const std::string& path, long long seed);

// The settings of each repeat of --repeats N: `settings` with experiment.seed = first_seed
// + k and, where `output_file` is not empty, output.file = seeded_output_path(output_file,
// seed), for k = 0..N-1. With N = 1 the settings are returned as they are.
std::vector<std::vector<RawSetting>> repeat_settings(const std::vector<RawSetting>& settings, int repeats,
                                                     long long first_seed, const std::string& output_file);

}  // namespace cmlbed::cli
