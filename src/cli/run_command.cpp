#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "cmlbed/config/config.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/net/mpi_session.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/setup/validate.hpp"
#include "cmlbed/train/experiment.hpp"
#include "cmlbed/train/method_registry.hpp"
#include "commands.hpp"
#include "run_arguments.hpp"
#include "run_plan.hpp"

namespace cmlbed::cli {

int run_command(int argc, char** argv) {
  net::MpiSession mpi(argc, argv);
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
