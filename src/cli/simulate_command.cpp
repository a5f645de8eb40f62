// `cmlbed simulate`: a run of fl, sfl or pipar predicted by the schedule simulator from
// a profile (given, or measured here first), written as an ordinary results file.
#include <boost/program_options.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <string>

#include "cmlbed/base/parse_integer.hpp"
#include "cmlbed/config/config.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/option_table.hpp"
#include "cmlbed/plan/schedule_simulator.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/setup/validate.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "cmlbed/train/experiment.hpp"
#include "cmlbed/train/profiler.hpp"
#include "cmlbed/train/round_report.hpp"
#include "cmlbed/train/simulation_setup.hpp"
#include "cmlbed/version.hpp"
#include "commands.hpp"
#include "run_arguments.hpp"

namespace po = boost::program_options;

namespace cmlbed::cli {
namespace {

struct SimulateArguments {
  std::string config_file;
  std::string profile_file;
  std::optional<int> devices;
  bool help = false;
  std::vector<RawSetting> settings;
};

po::options_description simulate_options() {
  po::options_description own("cmlbed simulate options");
  own.add_options()("help,h", "show this help")(
      "config", po::value<std::string>()->value_name("FILE"), "INI configuration file of the run to simulate")(
      "profile", po::value<std::string>()->value_name("FILE"),
      "stage lengths from this profile (`cmlbed profile`); without it, this process profiles first, as the "
      "server and as device 1")(
      "devices", po::value<std::string>()->value_name("N"),
      "simulate N devices (default: the config's '# ranks: R' header, R-1); devices without a [device.K] "
      "section take the [devices] and [network] defaults");
  return own;
}

// The devices a configuration was written for: its "# ranks: R" first line, R-1.
std::optional<int> devices_from_header(const std::string& config_file) {
  std::ifstream in(config_file);
  std::string first;
  std::getline(in, first);
  std::smatch match;
  if (!std::regex_match(first, match, std::regex(R"(#\s*ranks:\s*(\d+)\s*)"))) return std::nullopt;
  return std::stoi(match[1]) - 1;
}

SimulateArguments parse_simulate_arguments(int argc, const char* const* argv) {
  SimulateArguments args;
  args.settings = parse_command_line("simulate", simulate_options(), argc, argv,
                                     [&](const std::string& name, const std::string& value) {
                                       if (name == "help") args.help = true;
                                       if (name == "config") args.config_file = value;
                                       if (name == "profile") args.profile_file = value;
                                       if (name == "devices") {
                                         const auto n = parse_integer(value);
                                         if (!n || *n < 1 || *n > 1000000) {
                                           throw ConfigError("simulate: --devices " + value +
                                                             " is not an integer in 1..1000000");
                                         }
                                         args.devices = static_cast<int>(*n);
                                       }
                                     });
  if (!args.help && !args.devices && !args.config_file.empty()) args.devices = devices_from_header(args.config_file);
  if (!args.help && !args.devices) {
    throw ConfigError("simulate: how many devices? give --devices N (or a config whose first line is '# ranks: R')");
  }
  return args;
}

trace::RunInfo simulated_run_info(const Config& config, const train::RunStamp& started, int ranks) {
  trace::RunInfo info;
  info.config_ini = config.to_ini();
  info.cmlbed_version = kVersion;
  info.git_revision = kGitRevision;
  info.method = config.text("experiment.method");
  info.started_at = started.iso;
  info.mpi_size = ranks;
  info.clock_offsets_ns.assign(static_cast<std::size_t>(ranks), 0);
  info.clock_uncertainty_ns.assign(static_cast<std::size_t>(ranks), 0);
  return info;
}

int simulate(const Config& config, const SimulateArguments& args, const train::RunStamp& started) {
  const int devices = *args.devices;
  std::optional<plan::Profile> profile;
  try {
    if (!args.profile_file.empty()) profile = plan::read_profile(args.profile_file);
  } catch (const std::exception& e) {
    throw ConfigError(std::string("simulate: --profile: ") + e.what());
  }
  if (!profile) {
    std::cout << "simulate: profiling here first (as the server and as device 1)" << std::endl;
    profile = train::profile_in_process(config, train::ProfilerSettings{});
  }
  const auto began = std::chrono::steady_clock::now();
  const plan::SimulationInput input = train::simulation_input(config, *profile, devices);
  const std::vector<plan::SimulatedRound> rounds = plan::simulate(input);

  const std::string path = config.text("output.file");
  trace::ResultsFile results(path, config.flag("output.overwrite"), simulated_run_info(config, started, devices + 1));
  results.mark_simulated(plan::to_json(*profile).dump());
  std::vector<trace::RoundRecord> records;
  for (const plan::SimulatedRound& round : rounds) {
    train::RoundMeasures measures;
    measures.flops = round.flops;
    records.push_back(train::make_round_record(round.round, round.start_ns, round.end_ns, round.events, true, measures));
    for (int r = 0; r <= devices; ++r) results.append_events(r, round.events[static_cast<std::size_t>(r)]);
    results.append_round(records.back());
  }
  results.set_summary(train::summarize(records));
  results.close();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  train::print_summary(config.text("experiment.method") + ", simulated", records, path, std::cout);
  std::cout << "simulated " << devices << " devices, " << rounds.size() << " rounds in " << took << " s" << std::endl;
  return 0;
}

}  // namespace

int simulate_command(int argc, char** argv) {
  const train::RunStamp started = train::now_stamp();
  SimulateArguments args;
  std::optional<Config> config;
  try {
    args = parse_simulate_arguments(argc, argv);
    if (args.help) {
      std::cout << "Usage: cmlbed simulate --config FILE [--profile PROFILE.json] [--devices N] "
                   "[--section.key=value ...]\n"
                   "Predicts the run's rounds (fl, sfl, pipar) with the schedule simulator, without\n"
                   "mpirun, and writes them as a results file (root attribute simulated = 1;\n"
                   "docs/planning.md).\n\n"
                << simulate_options() << "\n"
                << config_options_description();
      return 0;
    }
    const auto file_settings =
        args.config_file.empty() ? std::vector<RawSetting>{} : read_ini_settings(args.config_file);
    config = Config::resolve(file_settings, args.settings);
    if (config->text("output.file").empty()) {
      args.settings.push_back({"output.file", "results/" + config->text("experiment.method") + "-simulated-" +
                                                  started.compact + ".h5", "default"});
      config = Config::resolve(file_settings, args.settings);
    }
    validate_config(*config, *args.devices + 1, /*check_output=*/true);
    return simulate(*config, args, started);
  } catch (const ConfigError& e) {
    std::cerr << "cmlbed: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cmlbed: failed: " << e.what() << std::endl;
    return 1;
  }
}

}  // namespace cmlbed::cli
