#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "cmlbed/base/parse_integer.hpp"
#include "cmlbed/config/config.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/option_table.hpp"
#include "cmlbed/net/mpi_session.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/setup/validate.hpp"
#include "cmlbed/trace/startup_clock.hpp"
#include "cmlbed/train/experiment.hpp"
#include "cmlbed/train/method_registry.hpp"
#include "commands.hpp"
#include "run_plan.hpp"

namespace po = boost::program_options;

namespace cmlbed::cli {
namespace {

struct RunArguments {
  std::string config_file;
  bool dry_run = false;
  bool help = false;
  std::optional<int> ranks;  // --ranks N: plan a dry run for N ranks without mpirun
  std::vector<RawSetting> settings;  // --section.key=value overrides
};

po::options_description run_options() {
  po::options_description own("cmlbed run options");
  own.add_options()("help,h", "show this help")(
      "config", po::value<std::string>()->value_name("FILE"),
      "INI configuration file; options given on the command line override it")(
      "dry-run", "check the configuration, print the plan and the resolved configuration, "
                 "and exit without training or writing any file")(
      "ranks", po::value<std::string>()->value_name("N"),
      "with --dry-run: check and plan for N ranks (1 server + N-1 devices) without "
      "starting N processes; under mpirun it must equal -np");
  return own;
}

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

// The number of ranks the run is checked and planned for: mpirun's, or --ranks N for a
// dry run started alone (so a 17-rank configuration can be checked without 17 processes).
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

RunArguments parse_run_arguments(int argc, char** argv) {
  po::options_description all;
  all.add(run_options()).add(config_options_description());
  po::parsed_options parsed(nullptr);
  try {
    // Unregistered options are let through so that --device.K.key=value can be
    // checked by Config, which also reports truly unknown names with a suggestion.
    parsed = po::command_line_parser(argc, argv)
                 .options(all)
                 .style(po::command_line_style::default_style &
                        ~po::command_line_style::allow_guessing)
                 .allow_unregistered()
                 .run();
  } catch (const po::error& e) {
    throw ConfigError(std::string("run: ") + e.what());
  }
  RunArguments args;
  for (const po::option& option : parsed.options) {
    const std::string value = option.value.empty() ? "" : option.value.front();
    if (option.position_key >= 0 || option.string_key.empty()) {
      throw ConfigError("run: unexpected argument '" + value +
                        "'; options are written --section.key=value");
    }
    if (option.string_key == "help") {
      args.help = true;
    } else if (option.string_key == "dry-run") {
      args.dry_run = true;
    } else if (option.string_key == "config") {
      args.config_file = value;
    } else if (option.string_key == "ranks") {
      args.ranks = parse_ranks(value);
    } else {
      // A bare --section.flag means true (po keeps implicit values out of the tokens).
      const OptionSpec* spec = find_option(option.string_key);
      const bool bare_flag = value.empty() && spec != nullptr && spec->type == OptionType::flag;
      args.settings.push_back({option.string_key, bare_flag ? "true" : value, "command line"});
    }
  }
  return args;
}

}  // namespace

int run_command(int argc, char** argv) {
  net::MpiSession mpi(argc, argv);
  trace::startup_clock().end(trace::StartupPhase::mpi_init);
  const bool is_server = mpi.rank() == 0;

  // Every rank parses and validates the same inputs; the ranks then agree on the first
  // error so that only rank 0 reports it and every rank exits with status 2.
  RunArguments args;
  int ranks = mpi.size();
  std::optional<Config> config;
  std::optional<std::string> error;
  const train::RunStamp started = train::now_stamp();
  try {
    args = parse_run_arguments(argc, argv);
    if (!args.help) {
      ranks = planned_ranks(args, mpi.size());
      const auto file_settings =
          args.config_file.empty() ? std::vector<RawSetting>{} : read_ini_settings(args.config_file);
      config = Config::resolve(file_settings, args.settings);
      if (is_server && config->text("output.file").empty()) {
        // Resolve the default file name once, so that the checked path, the path
        // written and the configuration stored in the file all agree.
        args.settings.push_back({"output.file", output_path(*config, started.compact), "default"});
        config = Config::resolve(file_settings, args.settings);
      }
      validate_config(*config, ranks, /*check_output=*/is_server && !args.dry_run);
      if (!args.dry_run) train::check_method_available(*config);
    }
  } catch (const ConfigError& e) {
    error = e.what();
  }
  error = net::agree_on_error(error, MPI_COMM_WORLD);
  trace::startup_clock().end(trace::StartupPhase::config);
  if (error) {
    if (is_server) std::cerr << "cmlbed: error: " << *error << "\n";
    return 2;
  }
  if (args.help) {
    if (is_server) {
      std::cout << "Usage: mpirun -np N cmlbed run --config FILE [--section.key=value ...] "
                   "[--dry-run [--ranks N]]\n\n"
                << run_options() << "\n"
                << config_options_description();
    }
    return 0;
  }

  if (args.dry_run) {
    if (!is_server) return 0;
    try {
      print_run_plan(*config, ranks - 1, std::cout);
    } catch (const std::invalid_argument& e) {  // e.g. data too small for the devices
      std::cerr << "cmlbed: error: " << e.what() << "\n";
      return 2;
    }
    return 0;
  }
  try {
    return train::run_experiment(*config, mpi, config->text("output.file"), started);
  } catch (const ConfigError& e) {
    // Found by every rank alike before any work (agreed): no abort needed.
    if (is_server) std::cerr << "cmlbed: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    // One rank failed while the others may be blocked waiting for it: report and take
    // the whole job down. Rank 0 has flushed every completed round to the results file.
    std::cerr << "cmlbed: failed: rank " << mpi.rank() << ": " << e.what() << std::endl;
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}

}  // namespace cmlbed::cli
