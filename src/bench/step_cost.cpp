#include "step_cost.hpp"

#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <thread>

#include "cmlbed/model/split_model.hpp"
#include "cmlbed/train/local_training.hpp"
#include "part_bench_options.hpp"

namespace cmlbed::bench {

Json step_cost(const std::map<std::string, std::string>& options) {
  const PartBenchOptions o = part_bench_options(options);
  const model::ModelOptions& model = o.model;
  const std::size_t split = o.split;
  const std::int64_t batch = o.batch;
  const int threads = o.threads;
  const int repeats = o.repeats;
  const int warmup = o.warmup;
  // What a server step in a run meets and back-to-back profile passes do not: idle time
  // before it, as it waits for the next arrival (cold caches, a core clocked down or given
  // to another tenant), and a different device's replica each time (sfl and pipar keep
  // one per device, so the weights of the next step were not the last ones used). Steps
  // go in blocks of `replicas`: plain blocks repeat replica 0 back to back, varied blocks
  // sleep gap_ms before each step and cycle through the replicas. Interleaved, so both
  // kinds see the same machine; each gets its own median.
  const double gap_ms = std::stod(option_or(options, "gap_ms", "0"));
  const int replicas = std::max(1, std::stoi(option_or(options, "replicas", "1")));
  // And, in varied blocks, this many MB written before each step: what another rank
  // computing on this core in the meantime leaves in the caches.
  std::vector<char> thrash(static_cast<std::size_t>(std::stod(option_or(options, "thrash_mb", "0")) * (1 << 20)));
  torch::set_num_threads(threads);

  const std::size_t layers = model::layer_count(model);
  model::ModelPart device(model, 0, split, 1);
  std::vector<std::unique_ptr<model::ModelPart>> servers;
  std::vector<std::unique_ptr<torch::optim::Optimizer>> optimizers;
  train::TrainingSettings settings;
  settings.lr = 0.01;
  for (int r = 0; r < replicas; ++r) {
    servers.push_back(std::make_unique<model::ModelPart>(model, split, layers, 1));
    optimizers.push_back(train::make_optimizer(*servers.back(), settings));
  }
  torch::Tensor activation;
  {
    torch::NoGradGuard no_grad;
    activation = device.forward(torch::rand({batch, model.input.channels, model.input.height, model.input.width}));
  }
  const torch::Tensor labels = torch::randint(0, 10, {batch}, torch::kInt64);
  const bool compare = gap_ms > 0 || replicas > 1 || !thrash.empty();
  std::vector<double> milliseconds, varied, plain;
  for (int i = -warmup; i < repeats; ++i) {  // < 0: warm-up
    const bool vary = compare && (i / replicas) % 2 != 0;
    const int r = vary ? ((i % replicas) + replicas) % replicas : 0;
    if (vary && gap_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(gap_ms));
    if (vary) std::fill(thrash.begin(), thrash.end(), static_cast<char>(i));
    const auto start = std::chrono::steady_clock::now();
    torch::Tensor input = activation.clone().requires_grad_(true);
    torch::Tensor loss = torch::nn::functional::cross_entropy(servers[r]->forward(input), labels);
    loss.backward();
    optimizers[r]->step();
    optimizers[r]->zero_grad();
    if (i < 0) continue;
    milliseconds.push_back(1e3 * seconds_since(start));
    (vary ? varied : plain).push_back(milliseconds.back());
  }
  std::printf("LibTorch %s server part [%zu,%zu) batch %lld, %d thread(s), %.1f ms gap: median %.3f ms per step\n",
              model.name.c_str(), split, layers, static_cast<long long>(batch), threads, gap_ms, median(milliseconds));
  if (compare) {
    std::printf("  %.1f ms gap, %.0f MB written and %d replicas in turn: median %.3f ms; one replica back to back: "
                "median %.3f ms\n", gap_ms, thrash.size() / double(1 << 20), replicas, median(varied), median(plain));
  }
  return Json()
      .text("framework", "libtorch")
      .text("model", model.name)
      .number("split", static_cast<double>(split))
      .number("batch", static_cast<double>(batch))
      .number("threads", threads)
      .number("warmup", warmup)
      .number("gap_ms", gap_ms)
      .numbers("step_ms", milliseconds)
      .number("median_step_ms", median(milliseconds))
      .number("replicas", replicas)
      .number("thrash_mb", thrash.size() / double(1 << 20))
      .number("median_varied_ms", varied.empty() ? 0.0 : median(varied))
      .number("median_plain_ms", median(plain));
}

}  // namespace cmlbed::bench
