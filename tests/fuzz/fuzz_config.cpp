// The configuration as `cmlbed run` reads it: an INI file plus command-line arguments,
// through Config::resolve and validate_config. Every input either passes or throws
// ConfigError (the CLI's exit status 2) whose message is one line; any other exception,
// a crash, a leak or an oversized allocation is a finding. Whatever resolves must also survive the results
// file's round trip: the resolved configuration written as INI (Config::to_ini, what a
// results file stores and a resumed run reads back) resolves to the same configuration.
//
// Input: the INI text, then optionally a NUL byte and the command-line arguments after
// `cmlbed run`, separated by NUL bytes (as in /proc/PID/cmdline), e.g.
//   "[train]\nlr = 0.1\n" "\0" "--dry-run" "\0" "--ranks=9" "\0" "--device.2.slowdown=3"
// Without --ranks the configuration is checked for 4 ranks (mpirun -np 4); with it, as
// `cmlbed run --dry-run --ranks N` started alone. --config is ignored: the INI text is
// the file. Not covered: the output file check (check_output: it touches the file
// system at the path given) and the dry run's plan (it loads the dataset).
// Run it from the repository root, where the configs' relative trace paths resolve.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cmlbed/config/config.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/setup/validate.hpp"
#include "fuzz_input_file.hpp"
#include "run_arguments.hpp"

namespace {

constexpr int kMpirunRanks = 4;

std::vector<std::string> split_arguments(std::string_view text) {
  std::vector<std::string> arguments = {"run"};
  while (true) {
    const std::size_t end = text.find('\0');
    arguments.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return arguments;
}

void check_round_trip(const cmlbed::Config& config) {
  const std::string ini = config.to_ini();
  const cmlbed::fuzz::InputFile resolved("resolved.ini",
                                         reinterpret_cast<const std::uint8_t*>(ini.data()),
                                         ini.size());
  std::string again;
  try {
    again = cmlbed::Config::resolve(cmlbed::read_ini_settings(resolved.path()), {}).to_ini();
  } catch (const cmlbed::ConfigError& e) {
    again = std::string("(an error: ") + e.what() + ")";
  }
  if (again != ini) {
    std::fprintf(stderr, "resolved configuration does not read back the same:\n%s\n--- read "
                         "back as ---\n%s\n", ini.c_str(), again.c_str());
    std::abort();
  }
}

}  // namespace

// One LibTorch thread: the model check runs one sample, and a thread pool would only
// add threads for the sanitizers to watch.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  cmlbed::model::set_intra_op_threads(1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t ini_end = input.find('\0');
  const std::string_view ini = input.substr(0, ini_end);
  std::vector<std::string> arguments;
  if (ini_end != std::string_view::npos) arguments = split_arguments(input.substr(ini_end + 1));
  else arguments = {"run"};
  std::vector<const char*> argv;
  for (const std::string& argument : arguments) argv.push_back(argument.c_str());

  const cmlbed::fuzz::InputFile ini_file("config.ini", data, ini.size());
  try {
    const cmlbed::cli::RunArguments args =
        cmlbed::cli::parse_run_arguments(static_cast<int>(argv.size()), argv.data());
    if (args.help) return 0;
    const int ranks = cmlbed::cli::planned_ranks(args, args.ranks ? 1 : kMpirunRanks);
    const cmlbed::Config config =
        cmlbed::Config::resolve(cmlbed::read_ini_settings(ini_file.path()), args.settings);
    check_round_trip(config);
    cmlbed::validate_config(config, ranks, /*check_output=*/false);
  } catch (const cmlbed::ConfigError& e) {
    // The CLI prints it as one line (docs/reference/commands.md).
    if (std::string_view(e.what()).find_first_of("\r\n") != std::string_view::npos) {
      std::fprintf(stderr, "configuration error on more than one line: %s\n", e.what());
      std::abort();
    }
  }
  return 0;
}
