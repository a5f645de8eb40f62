#include <cstring>
#include <exception>
#include <iostream>

#include "cmlbed/base/heap_policy.hpp"
#include "cmlbed/base/interrupt.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/methods.hpp"
#include "cmlbed/trace/startup_clock.hpp"
#include "cmlbed/version.hpp"
#include "commands.hpp"

namespace {

void print_usage(std::ostream& out) {
  out << "cmlbed " << cmlbed::kVersion
      << " - a testbed for collaborative machine learning on MPI\n\n"
         "Usage:\n"
         "  cmlbed run --config FILE [--section.key=value ...] [--dry-run [--ranks N]]\n"
         "      run an experiment under mpirun (rank 0 = server, ranks 1.. = devices);\n"
         "      --dry-run --ranks N checks and plans for N ranks without mpirun;\n"
         "      `cmlbed run --help` lists every option with its default and unit\n"
         "  cmlbed run --resume RESULTS.h5 [--experiment.rounds=R ...]\n"
         "      continue a stopped run after its last checkpoint, under mpirun with the\n"
         "      rank count it was written with, appending to RESULTS.h5\n"
         "  cmlbed profile --config FILE [-o PROFILE.json] [--section.key=value ...]\n"
         "      under mpirun: every rank measures its share of the run's work (each layer's\n"
         "      forward and backward, optimizer steps, averaging) into a JSON profile\n"
         "  cmlbed simulate --config FILE [--profile PROFILE.json] [--devices N]\n"
         "      without mpirun: predict the run's rounds ("
      << cmlbed::method_list(&cmlbed::MethodTraits::simulatable)
      << ") from a profile\n"
         "      and write them as a results file (simulated = 1)\n"
         "  cmlbed plan --config FILE [--profile PROFILE.json] [--devices N]\n"
         "      every split point and micro-batch count of a run of "
      << cmlbed::method_list(&cmlbed::MethodTraits::plannable, "or")
      << ", predicted by\n"
         "      the simulator, the fastest marked (and the PiPar authors' closed-form choice)\n"
         "  cmlbed info [--model NAME] [--input CxHxW] [--classes N] | --methods\n"
         "      the model zoo: per-layer parameters, FLOPs and activation bytes; or the\n"
         "      methods (" << cmlbed::method_list([](const cmlbed::MethodTraits&) { return true; })
      << ") and what each does\n"
         "  (tables, pictures and traces of results files: scripts/cmlbed-report)\n"
         "  cmlbed --version\n"
         "  cmlbed --help\n\n"
         "Exit status: 0 success, 1 failure while running, 2 bad command line or "
         "configuration, 128 + N stopped by signal N.\n";
}

}  // namespace

int main(int argc, char** argv) {
  // Everything before this line is the dynamic loader and static initialisers.
  cmlbed::trace::startup_clock().end(cmlbed::trace::StartupPhase::load);
  if (argc < 2) {
    print_usage(std::cerr);
    return 2;
  }
  const char* command = argv[1];
  if (std::strcmp(command, "--help") == 0 || std::strcmp(command, "-h") == 0) {
    print_usage(std::cout);
    return 0;
  }
  if (std::strcmp(command, "--version") == 0) {
    std::cout << "cmlbed " << cmlbed::kVersion << " (git " << cmlbed::kGitRevision << ")\n";
    return 0;
  }
  try {
    cmlbed::apply_heap_policy();
  } catch (const std::invalid_argument& e) {
    std::cerr << "cmlbed: error: " << e.what() << "\n";
    return 2;
  }
  cmlbed::install_interrupt_handlers();
  try {
    if (std::strcmp(command, "info") == 0) return cmlbed::cli::info_command(argc - 1, argv + 1);
    if (std::strcmp(command, "run") == 0) return cmlbed::cli::run_command(argc - 1, argv + 1);
    if (std::strcmp(command, "profile") == 0) return cmlbed::cli::profile_command(argc - 1, argv + 1);
    if (std::strcmp(command, "simulate") == 0) return cmlbed::cli::simulate_command(argc - 1, argv + 1);
    if (std::strcmp(command, "plan") == 0) return cmlbed::cli::plan_command(argc - 1, argv + 1);
    std::cerr << "cmlbed: error: unknown command '" << command
              << "'; commands: run, profile, simulate, plan, info (see `cmlbed --help`)\n";
    return 2;
  } catch (const cmlbed::ConfigError& e) {
    std::cerr << "cmlbed: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cmlbed: failed: " << e.what() << "\n";
    return 1;
  }
}
