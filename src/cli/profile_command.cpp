// `cmlbed profile`: every rank of an mpirun measures its share of the configured
// model's work, in turn; rank 0 writes the profile (JSON) and prints a summary.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>

#include "cmlbed/base/parse_integer.hpp"
#include "cmlbed/config/config.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/option_table.hpp"
#include "cmlbed/net/mpi_session.hpp"
#include "cmlbed/net/wait_politely.hpp"
#include "cmlbed/setup/validate.hpp"
#include "cmlbed/planner/profiler.hpp"
#include "commands.hpp"
#include "run_arguments.hpp"

namespace po = boost::program_options;

namespace cmlbed::cli {
namespace {

struct ProfileArguments {
  std::string config_file;
  std::string output = "profile.json";
  planner::ProfilerSettings settings;
  bool help = false;
  std::vector<RawSetting> overrides;
};

po::options_description profile_options() {
  po::options_description own("cmlbed profile options");
  own.add_options()("help,h", "show this help")(
      "config", po::value<std::string>()->value_name("FILE"),
      "INI configuration file of the run to profile; options on the command line override it")(
      "output,o", po::value<std::string>()->value_name("FILE"), "where to write the profile (default profile.json)")(
      "repeats", po::value<std::string>()->value_name("N"), "timed runs per measurement, median kept (default 5)")(
      "warmup", po::value<std::string>()->value_name("N"), "untimed runs before each measurement (default 2)");
  return own;
}

int count_option(const std::string& name, const std::string& value, int min) {
  const std::optional<long long> n = parse_integer(value);
  if (!n || *n < min || *n > 1000) {
    throw ConfigError("profile: --" + name + " " + value + " is not an integer in " + std::to_string(min) +
                      "..1000");
  }
  return static_cast<int>(*n);
}

ProfileArguments parse_profile_arguments(int argc, const char* const* argv) {
  ProfileArguments args;
  args.overrides = parse_command_line("profile", profile_options(), argc, argv,
                                      [&](const std::string& name, const std::string& value) {
                                        if (name == "help") args.help = true;
                                        if (name == "config") args.config_file = value;
                                        if (name == "output") args.output = value;
                                        if (name == "repeats") args.settings.repeats = count_option(name, value, 1);
                                        if (name == "warmup") args.settings.warmup = count_option(name, value, 0);
                                      });
  return args;
}

void print_summary(const sim::Profile& profile, const std::string& path, std::ostream& out) {
  out << "profile of " << profile.model << " (" << profile.dataset << "), batch sizes";
  for (const auto size : profile.batch_sizes) out << " " << size;
  out << ", " << profile.repeats << " repeats after " << profile.warmup << " warm-up: "
      << std::fixed << std::setprecision(2) << profile.seconds << " s\n";
  out << std::setw(6) << "rank" << std::setw(8) << "role" << std::setw(9) << "threads" << std::setw(16)
      << "fwd+bwd ms (B)" << std::setw(10) << "step ms" << std::setw(10) << "took s" << "\n";
  for (const sim::RankProfile& rank : profile.ranks) {
    double compute = 0, step = 0;
    for (const sim::LayerProfile& layer : rank.layers) {
      compute += layer.forward_s.back() + layer.backward_s.back();
      step += layer.step_s;
    }
    out << std::setw(6) << rank.rank << std::setw(8) << rank.role << std::setw(9) << rank.threads
        << std::setw(16) << std::setprecision(3) << compute * 1e3 << std::setw(10) << step * 1e3
        << std::setw(10) << std::setprecision(2) << rank.seconds << "\n";
  }
  for (const sim::InterpolationCheck& check : profile.interpolation_checks) {
    out << "interpolation check at batch " << check.batch_size << " (server, all layers): measured "
        << std::setprecision(3) << check.measured_s * 1e3 << " ms, interpolated " << check.interpolated_s * 1e3
        << " ms (" << std::showpos << std::setprecision(1)
        << (check.interpolated_s / check.measured_s - 1) * 100 << std::noshowpos << "%)\n";
  }
  out << "profile: " << path << std::endl;
}

}  // namespace

int profile_command(int argc, char** argv) {
  net::MpiSession mpi(argc, argv);
  const bool is_server = mpi.rank() == 0;
  ProfileArguments args;
  std::optional<Config> config;
  std::optional<std::string> error;
  try {
    args = parse_profile_arguments(argc, argv);
    if (!args.help) {
      const auto file_settings =
          args.config_file.empty() ? std::vector<RawSetting>{} : read_ini_settings(args.config_file);
      config = Config::resolve(file_settings, args.overrides);
      validate_config(*config, mpi.size(), /*check_output=*/false);
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
      std::cout << "Usage: mpirun -np N cmlbed profile --config FILE [-o PROFILE.json] [--section.key=value ...]\n"
                   "Every rank measures, one at a time, what it would compute in the run: each layer's\n"
                   "forward and backward at the batch sizes a plan needs, optimizer steps, averaging\n"
                   "and message encoding (docs/explanation/simulator.md).\n\n"
                << profile_options() << "\n"
                << config_options_description();
    }
    return 0;
  }
  try {
    const sim::Profile profile =
        planner::profile_ranks(planner::plan_spec(*config, mpi.size() - 1), MPI_COMM_WORLD, args.settings);
    if (is_server) {
      sim::write_profile(args.output, profile);
      print_summary(profile, args.output, std::cout);
    }
  } catch (const std::exception& e) {
    std::cerr << "cmlbed: failed: rank " << mpi.rank() << ": " << e.what() << std::endl;
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
  return 0;
}

}  // namespace cmlbed::cli
