#include "run_arguments.hpp"

#include <algorithm>
#include <string>
#include <vector>
#include <boost/program_options.hpp>

#include "cmlbed/base/parse_integer.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/option_table.hpp"
#include "cmlbed/config/settings.hpp"

namespace po = boost::program_options;

namespace cmlbed::cli {
namespace {

int parse_ranks(const std::string& value) {
  const std::optional<long long> ranks = parse_integer(value);
  if (!ranks) {
    throw ConfigError("run: --ranks '" + value + "' is not an integer; give the number of " +
                      "ranks to plan for, e.g. --ranks 17 for 1 server + 16 devices");
  }
  if (*ranks < 2 || *ranks > 100000) {
    throw ConfigError("run: --ranks " + value + " is out of range; allowed: 2..100000 " +
                      "(1 server + at least 1 device)");
  }
  return static_cast<int>(*ranks);
}

int parse_repeats(const std::string& value) {
  const std::optional<long long> repeats = parse_integer(value);
  if (!repeats || *repeats < 1 || *repeats > 1000) {
    throw ConfigError("run: --repeats '" + value + "' is not an integer in 1..1000; give the number of " +
                      "seeds to run, e.g. --repeats 3 for experiment.seed, seed+1 and seed+2");
  }
  return static_cast<int>(*repeats);
}

// A command line names an option once (Config::resolve refuses a second): the repeat's
// value takes the place of the user's.
void replace_setting(std::vector<RawSetting>& settings, RawSetting setting) {
  settings.erase(std::remove_if(settings.begin(), settings.end(),
                                [&](const RawSetting& s) { return s.name == setting.name; }),
                 settings.end());
  settings.push_back(std::move(setting));
}

}  // namespace

po::options_description run_options() {
  po::options_description own("cmlbed run options");
  own.add_options()("help,h", "show this help")(
      "markdown", "with --help: print every configuration option as the Markdown reference "
                  "page docs/reference/options.md")(
      "config", po::value<std::string>()->value_name("FILE"),
      "INI configuration file; options given on the command line override it")(
      "dry-run", "check the configuration, print the plan and the resolved configuration, "
                 "and exit without training or writing any file")(
      "strict-emulation", "refuse a run this host is predicted not to keep the devices' pace for "
                          "(exit 2): plan.check_pacing = strict")(
      "ranks", po::value<std::string>()->value_name("N"),
      "with --dry-run: check and plan for N ranks (1 server + N-1 devices) without "
      "starting N processes; under mpirun it must equal -np")(
      "repeats", po::value<std::string>()->value_name("N"),
      "run the configuration N times, with experiment.seed = S, S+1, ..., S+N-1 (S: the "
      "configured seed), one after another in this mpirun; each writes its own results "
      "file, output.file with .seedS before .h5 (e.g. results/x.seed2.h5), which "
      "`cmlbed-report summary` groups into one row with n and 95% intervals")(
      "resume", po::value<std::string>()->value_name("FILE"),
      "continue the run of results file FILE after its last checkpoint (FILE.ckpt), "
      "appending to FILE, under mpirun with the rank count FILE was written with; the "
      "configuration stored in FILE is used: only experiment.rounds, experiment.timeout "
      "and output.* (output.file = FILE) may be given, and other options only with their "
      "stored values");
  return own;
}

int planned_ranks(const RunArguments& args, int mpi_size) {
  if (!args.ranks) return mpi_size;
  if (!args.dry_run) {
    throw ConfigError("run: --ranks " + std::to_string(*args.ranks) +
                      " applies only with --dry-run; a real run has the ranks mpirun starts "
                      "(mpirun -np " + std::to_string(*args.ranks) + ")");
  }
  if (mpi_size > 1 && *args.ranks != mpi_size) {
    throw ConfigError("run: --ranks " + std::to_string(*args.ranks) + " disagrees with the " +
                      std::to_string(mpi_size) + " ranks mpirun started; drop --ranks or " +
                      "make it equal to -np");
  }
  return *args.ranks;
}

namespace {

// Boost refuses "--section.key=" (nothing after the sign), yet an empty value is how an
// option is cleared (network.uplink_rate: unshaped; network.uplink_trace: none), as in
// an INI file. Such a token reaches Boost with this placeholder, turned back into ""
// once parsed.
constexpr const char* kEmptyValue = "\x1f(empty)";

std::vector<std::string> with_empty_values_marked(int argc, const char* const* argv) {
  std::vector<std::string> tokens(argv, argv + argc);
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    if (tokens[i].size() > 3 && tokens[i].rfind("--", 0) == 0 && tokens[i].back() == '=') tokens[i] += kEmptyValue;
  }
  return tokens;
}

}  // namespace

std::vector<RawSetting> parse_command_line(
    const std::string& command, const po::options_description& own, int argc, const char* const* argv,
    const std::function<void(const std::string& name, const std::string& value)>& take_own) {
  po::options_description all;
  all.add(own).add(config_options_description());
  po::parsed_options parsed(nullptr);
  const std::vector<std::string> tokens = with_empty_values_marked(argc, argv);
  try {
    // Unregistered options are let through so that --device.K.key=value can be
    // checked by Config, which also reports truly unknown names with a suggestion.
    // (the first token is the program's or the subcommand's name, as Boost's argc/argv form skips it)
    parsed = po::command_line_parser(tokens.empty() ? tokens : std::vector<std::string>(tokens.begin() + 1, tokens.end()))
                 .options(all)
                 .style(po::command_line_style::default_style &
                        ~po::command_line_style::allow_guessing)
                 .allow_unregistered()
                 .run();
  } catch (const po::error& e) {
    throw ConfigError(command + ": " + e.what());
  }
  std::vector<RawSetting> settings;
  for (const po::option& option : parsed.options) {
    std::string value = option.value.empty() ? "" : option.value.front();
    if (value == kEmptyValue) value.clear();
    if (option.position_key >= 0 || option.string_key.empty()) {
      throw ConfigError(command + ": unexpected argument '" + value +
                        "'; options are written --section.key=value");
    }
    if (own.find_nothrow(option.string_key, false) != nullptr) {
      take_own(option.string_key, value);
    } else {
      // A bare --section.flag means true (po keeps implicit values out of the tokens).
      const OptionSpec* spec = find_option(option.string_key);
      const bool bare_flag = value.empty() && spec != nullptr && spec->type == OptionType::flag;
      settings.push_back({option.string_key, bare_flag ? "true" : value, "command line"});
    }
  }
  return settings;
}

RunArguments parse_run_arguments(int argc, const char* const* argv) {
  RunArguments args;
  bool strict = false;
  args.settings = parse_command_line("run", run_options(), argc, argv, [&](const std::string& name, const std::string& value) {
    if (name == "help") {
      args.help = true;
    } else if (name == "markdown") {
      args.markdown = true;
    } else if (name == "dry-run") {
      args.dry_run = true;
    } else if (name == "strict-emulation") {
      strict = true;
    } else if (name == "config") {
      args.config_file = value;
    } else if (name == "resume") {
      args.resume_file = value;
    } else if (name == "ranks") {
      args.ranks = parse_ranks(value);
    } else if (name == "repeats") {
      args.repeats = parse_repeats(value);
    }
  });
  if (strict) replace_setting(args.settings, {Settings::name(&Settings::plan, &PlanSection::check_pacing), "strict", "--strict-emulation"});
  if (args.markdown && !args.help) {
    throw ConfigError("run: --markdown goes with --help (cmlbed run --help --markdown prints the options' reference page)");
  }
  if (args.repeats > 1 && !args.resume_file.empty()) {
    throw ConfigError("run: --repeats cannot be combined with --resume: resume each seed's file on its own "
                      "(cmlbed run --resume FILE.seedS.h5)");
  }
  return args;
}

std::string seeded_output_path(const std::string& path, long long seed) {
  const std::string suffix = ".seed" + std::to_string(seed);
  const std::string extension = ".h5";
  if (path.size() > extension.size() && path.compare(path.size() - extension.size(), extension.size(), extension) == 0) {
    return path.substr(0, path.size() - extension.size()) + suffix + extension;
  }
  return path + suffix;
}

std::vector<std::vector<RawSetting>> repeat_settings(const std::vector<RawSetting>& settings, int repeats,
                                                     long long first_seed, const std::string& output_file) {
  if (repeats == 1) return {settings};
  std::vector<std::vector<RawSetting>> all;
  for (int k = 0; k < repeats; ++k) {
    const long long seed = first_seed + k;
    std::vector<RawSetting> repeat = settings;
    replace_setting(repeat, {Settings::name(&Settings::experiment, &ExperimentSection::seed), std::to_string(seed), "--repeats"});
    if (!output_file.empty()) {
      replace_setting(repeat, {Settings::name(&Settings::output, &OutputSection::file),
                               seeded_output_path(output_file, seed), "--repeats"});
    }
    all.push_back(std::move(repeat));
  }
  return all;
}

}  // namespace cmlbed::cli
