#pragma once
// The options the LibTorch micro-benchmarks of a model part share (`step`,
// `device-pattern`): --model, --input, --split, --batch, --threads, --repeats, --warmup.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "cmlbed/base/image_shape.hpp"
#include "cmlbed/model/zoo.hpp"

namespace cmlbed::bench {

// `options[key]`, or `fallback` when it is not given.
inline std::string option_or(const std::map<std::string, std::string>& options, const char* key,
                             const char* fallback) {
  const auto found = options.find(key);
  return found == options.end() ? std::string(fallback) : found->second;
}

struct PartBenchOptions {
  model::ModelOptions model;
  std::size_t split = 4;
  std::int64_t batch = 32;
  int threads = 1;
  int repeats = 50;
  // Untimed runs first, as scripts/bench/bench-step-pytorch.py does (5): the first steps grow
  // the allocator, create the optimizer's momentum buffers and pick kernels.
  int warmup = 5;
};

inline PartBenchOptions part_bench_options(const std::map<std::string, std::string>& options) {
  PartBenchOptions o;
  o.model = {option_or(options, "model", "vgg5"), parse_image_shape(option_or(options, "input", "1x28x28")), 10};
  o.split = static_cast<std::size_t>(std::stoul(option_or(options, "split", "4")));
  o.batch = std::stoll(option_or(options, "batch", "32"));
  o.threads = std::stoi(option_or(options, "threads", "1"));
  o.repeats = std::stoi(option_or(options, "repeats", "50"));
  o.warmup = std::max(0, std::stoi(option_or(options, "warmup", "5")));
  return o;
}

}  // namespace cmlbed::bench
