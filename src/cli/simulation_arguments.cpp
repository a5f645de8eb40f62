#include "simulation_arguments.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <fstream>
#include <iostream>
#include <regex>

#include "cmlbed/base/parse_integer.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/setup/validate.hpp"
#include "cmlbed/planner/profiler.hpp"
#include "cmlbed/planner/auto_plan.hpp"
#include "run_arguments.hpp"

namespace po = boost::program_options;

namespace cmlbed::cli {
namespace {

// The devices a configuration was written for: its "# ranks: R" first line, R-1.
std::optional<int> devices_from_header(const std::string& config_file) {
  std::ifstream in(config_file);
  std::string first;
  std::getline(in, first);
  std::smatch match;
  if (!std::regex_match(first, match, std::regex(R"(#\s*ranks:\s*(\d+)\s*)"))) return std::nullopt;
  return std::stoi(match[1]) - 1;
}

}  // namespace

po::options_description simulate_options(const std::string& command) {
  po::options_description own("cmlbed " + command + " options");
  own.add_options()("help,h", "show this help")(
      "config", po::value<std::string>()->value_name("FILE"), "INI configuration file of the run to simulate")(
      "profile", po::value<std::string>()->value_name("FILE"),
      "stage lengths from this profile (`cmlbed profile`); without it, this process profiles first, as the "
      "server and as device 1")(
      "devices", po::value<std::string>()->value_name("N"),
      "simulate N devices (default: the config's '# ranks: R' header, R-1); devices without a [device.K] "
      "section take the [devices] and [network] defaults");
  if (command == "simulate") {
    static const std::string events_help =
        "how the results file keeps the events: every one (all), or per rank, round, lane, kind and message their "
        "count, seconds and bytes (totals); auto (default): totals above " + std::to_string(kMostEventsKept) + " events";
    own.add_options()("events", po::value<std::string>()->value_name("all|totals|auto"),
                      events_help.c_str());
  }
  if (command == "plan") {
    own.add_options()("every-candidate",
                      "simulate every candidate, also those whose lower bound exceeds the best round (the same "
                      "choice, slower; every row of the table predicted)");
  }
  return own;
}

SimulateArguments parse_simulate_arguments(const std::string& command, int argc, const char* const* argv) {
  SimulateArguments args;
  args.settings = parse_command_line(command, simulate_options(command), argc, argv,
                                     [&](const std::string& name, const std::string& value) {
                                       if (name == "help") args.help = true;
                                       if (name == "config") args.config_file = value;
                                       if (name == "profile") args.profile_file = value;
                                       if (name == "every-candidate") args.every_candidate = true;
                                       if (name == "events") {
                                         if (value != "all" && value != "totals" && value != "auto") {
                                           throw ConfigError(command + ": --events " + value +
                                                             ": expected all, totals or auto");
                                         }
                                         args.events = value;
                                       }
                                       if (name == "devices") {
                                         const auto n = parse_integer(value);
                                         if (!n || *n < 1 || *n > 1000000) {
                                           throw ConfigError(command + ": --devices " + value +
                                                             " is not an integer in 1..1000000");
                                         }
                                         args.devices = static_cast<int>(*n);
                                       }
                                     });
  if (!args.help && !args.devices && !args.config_file.empty()) args.devices = devices_from_header(args.config_file);
  if (!args.help && !args.devices) {
    throw ConfigError(command + ": how many devices? give --devices N (or a config whose first line is '# ranks: R')");
  }
  return args;
}

Settings simulation_settings(const SimulateArguments& args, const std::string& stamp, bool check_output) {
  const std::vector<RawSetting> file_settings =
      args.config_file.empty() ? std::vector<RawSetting>{} : read_ini_settings(args.config_file);
  Settings settings = Config::resolve(file_settings, args.settings);
  if (settings.output.file.empty()) {
    settings = settings.config().with_settings(
        {{Settings::name(&Settings::output, &OutputSection::file),
          "results/" + settings.experiment.method + "-simulated-" + stamp + ".h5", "default"}});
  }
  validate_config(settings, *args.devices + 1, check_output);
  return settings;
}

sim::Profile simulation_profile(const Settings& settings, const SimulateArguments& args, const std::string& command) {
  if (!args.profile_file.empty()) {
    try {
      return sim::read_profile(args.profile_file);
    } catch (const std::exception& e) {
      throw ConfigError(command + ": --profile: " + e.what());
    }
  }
  std::cout << command << ": profiling here first (as the server and as device 1)" << std::endl;
  return planner::profile_in_process(planner::plan_spec(settings, 1), planner::ProfilerSettings{});
}

SimulationChoice simulation_choice(const Settings& settings, const sim::Profile& profile, int devices) {
  if (!settings.any_auto(devices)) return {settings, std::nullopt, {}, {}};
  planner::AutoChoice choice = planner::choose_auto_from(settings, profile, devices);
  return {choice.settings, std::move(choice.table), std::move(choice.freedom), std::move(choice.plan.devices)};
}

int report_errors(const std::function<int()>& command) {
  try {
    return command();
  } catch (const ConfigError& e) {
    std::cerr << "cmlbed: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cmlbed: failed: " << e.what() << std::endl;
    return 1;
  }
}

}  // namespace cmlbed::cli
