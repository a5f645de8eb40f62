// cmlbed compare FILE...: one table comparing runs from their results files, with the
// first file as the baseline for speedups (the main job passes FL first).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>

#include "cmlbed/config/config_error.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "commands.hpp"

namespace cmlbed::cli {
namespace {

struct RunSummary {
  std::string method;
  std::map<std::string, double> values;
};

RunSummary read_run(const std::string& path) {
  try {
    RunSummary run;
    run.method = trace::ResultsFile::read_string_attribute(path, "method");
    for (const auto& [name, value] : trace::ResultsFile::read_summary(path)) run.values[name] = value;
    if (run.values.count("rounds") == 0 || run.values["rounds"] < 1) {
      throw ConfigError(path + " holds no completed round");
    }
    return run;
  } catch (const ConfigError&) {
    throw;
  } catch (const std::exception& e) {
    std::string why = e.what();
    for (char& c : why) {
      if (c == '\n') c = ' ';
    }
    throw ConfigError("compare: " + path + " is not a readable cmlbed results file (" +
                      why.substr(0, 240) + ")");
  }
}

}  // namespace

int compare_command(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::cout << "Usage: cmlbed compare FILE.h5 [FILE.h5 ...]\n"
                 "  one line per run; speedup and idle reduction are against the first file\n";
    return argc < 2 ? 2 : 0;
  }
  std::vector<std::string> paths(argv + 1, argv + argc);
  std::vector<RunSummary> runs;
  for (const auto& path : paths) runs.push_back(read_run(path));
  auto& base = runs.front().values;
  std::printf("%-9s %6s %9s %12s %12s %13s %9s %9s %9s %9s %10s\n", "method", "rounds",
              "round s", "server idle", "device idle", "server idle s", "MB up", "MB down",
              "accuracy", "speedup", "idle /x");
  for (auto& run : runs) {
    auto& v = run.values;
    const double speedup = v["mean_round_s"] > 0 ? base["mean_round_s"] / v["mean_round_s"] : 0;
    const double idle_reduction = v["server_idle_s"] > 0 ? base["server_idle_s"] / v["server_idle_s"] : 0;
    std::printf("%-9s %6.0f %9.3f %11.1f%% %11.1f%% %13.2f %9.2f %9.2f %9.4f %8.2fx %9.2fx\n",
                run.method.c_str(), v["rounds"], v["mean_round_s"], 100 * v["server_idle_fraction"],
                100 * v["mean_device_idle_fraction"], v["server_idle_s"], v["bytes_up"] / 1e6,
                v["bytes_down"] / 1e6, v["final_test_accuracy"], speedup, idle_reduction);
  }
  std::printf("(round s = mean training time per round; idle = round time minus the union of "
              "compute; speedup and idle /x against %s)\n", runs.front().method.c_str());
  return 0;
}

}  // namespace cmlbed::cli
