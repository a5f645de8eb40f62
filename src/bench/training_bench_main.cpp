// cmlbed-bench-training: figures for the training methods, from results files that
// scripts/bench/bench-training.sh produces.
//   cmlbed-bench-training pipeline PIPAR.h5 [--warmup ROUNDS] [--json FILE]
//   cmlbed-bench-training overhead --on A.h5 B.h5 ... --off C.h5 D.h5 ... [--json FILE]
//   cmlbed-bench-training step --model vgg5 --input 1x28x28 --split 4 --batch 32 [--threads 1]
//       [--repeats 50] [--warmup 5] [--gap_ms 0] [--replicas 1] [--thrash_mb 0] [--json FILE]
//   cmlbed-bench-training device-pattern --model vgg5 --input 1x28x28 --split 4 --batch 32
//       --micro_batches 4 [--threads 1] [--repeats 50] [--warmup 5] [--json FILE]
// --warmup: what is not counted in the medians, OSU style: the first ROUNDS rounds of
// the pipar run (default 1), or the first untimed steps (default 5, as the PyTorch side).
#include <iostream>
#include <map>

#include "cmlbed/base/heap_policy.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "device_pattern.hpp"
#include "pipeline_efficiency.hpp"
#include "step_cost.hpp"

namespace {

using namespace cmlbed;
using namespace cmlbed::bench;

double mean_round(const std::string& path) {
  for (const auto& [name, value] : trace::ResultsFile::read_summary(path)) {
    if (name == "mean_round_s") return value;
  }
  throw std::runtime_error(path + " has no summary");
}

Json logging_overhead(const std::vector<std::string>& on, const std::vector<std::string>& off) {
  std::vector<double> with, without;
  for (const auto& f : on) with.push_back(mean_round(f));
  for (const auto& f : off) without.push_back(mean_round(f));
  const double ratio = median(with) / median(without);
  std::printf("timeline on: median round %.4f s; off: %.4f s; overhead %+.2f%%\n", median(with),
              median(without), 100 * (ratio - 1));
  return Json()
      .numbers("round_s_timeline_on", with)
      .numbers("round_s_timeline_off", without)
      .number("ratio_on_over_off", ratio)
      .number("overhead_percent", 100 * (ratio - 1));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    cmlbed::apply_heap_policy();  // as in a run: the parts allocate as they would there
    if (argc < 2) throw std::invalid_argument("missing subcommand");
    const std::string command = argv[1];
    std::string json_path;
    std::map<std::string, std::string> options;
    std::vector<std::string> positional, on, off;
    std::vector<std::string>* list = &positional;
    for (int i = 2; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--on") {
        list = &on;
      } else if (arg == "--off") {
        list = &off;
      } else if (arg.rfind("--", 0) == 0 && i + 1 < argc) {
        options[arg.substr(2)] = argv[++i];
      } else {
        list->push_back(arg);
      }
    }
    json_path = options.count("json") ? options["json"] : "results/bench-training-" + command + ".json";
    Json result;
    if (command == "pipeline" && positional.size() == 1) {
      result = pipeline_efficiency(positional[0],
                                   options.count("warmup") ? std::stoi(options["warmup"]) : 1);
    } else if (command == "overhead" && !on.empty() && !off.empty()) {
      result = logging_overhead(on, off);
    } else if (command == "step") {
      result = step_cost(options);
    } else if (command == "device-pattern") {
      result = device_pattern(options);
    } else {
      throw std::invalid_argument("bad arguments for '" + command + "'");
    }
    write_json(json_path, result);
    std::cout << "wrote " << json_path << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "cmlbed-bench-training: " << e.what()
              << "\nusage: cmlbed-bench-training pipeline PIPAR.h5 [--warmup ROUNDS] | overhead "
                 "--on A.h5... --off B.h5... | step [--model M --input CxHxW --split P --batch B "
                 "--threads T --repeats N --warmup N] | device-pattern [--model M --input CxHxW --split P --batch B "
                 "--micro_batches M --threads T --repeats N --warmup N] [--json FILE]\n";
    return 2;
  }
}
