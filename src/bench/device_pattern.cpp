#include "device_pattern.hpp"

#include <torch/torch.h>

#include <chrono>
#include <cstdio>

#include "cmlbed/model/split_model.hpp"
#include "cmlbed/train/local_training.hpp"
#include "part_bench_options.hpp"

namespace cmlbed::bench {

Json device_pattern(const std::map<std::string, std::string>& options) {
  const PartBenchOptions o = part_bench_options(options);
  const model::ModelOptions& model = o.model;
  const int m = std::stoi(option_or(options, "micro_batches", "4"));
  torch::set_num_threads(o.threads);
  if (m < 1 || m > o.batch) throw std::invalid_argument("device-pattern: need 1 <= micro_batches <= batch");

  model::ModelPart device(model, 0, o.split, 1);
  train::TrainingSettings settings;
  settings.lr = 0.01;
  settings.momentum = 0.9;
  const auto optimizer = train::make_optimizer(device, settings);
  const torch::Tensor images = torch::rand({o.batch, model.input.channels, model.input.height, model.input.width});
  const auto pieces = images.tensor_split(m);
  // forward[i], backward[i]: milliseconds of micro-batch i, pipelined and alone.
  std::vector<std::vector<double>> forward(m), backward(m), forward_alone(m), backward_alone(m);
  const auto step = [&] {
    if (!optimizer) return;
    optimizer->step();
    optimizer->zero_grad();
  };
  const auto timed = [](auto&& work) {
    const auto start = std::chrono::steady_clock::now();
    work();
    return 1e3 * seconds_since(start);
  };
  for (int r = -o.warmup; r < o.repeats; ++r) {
    // As the run: all forwards (their graphs alive), then the backwards in order.
    std::vector<torch::Tensor> outputs(m);
    for (int i = 0; i < m; ++i) {
      const double ms = timed([&] { outputs[i] = device.forward(pieces[i]); });
      if (r >= 0) forward[i].push_back(ms);
    }
    for (int i = 0; i < m; ++i) {
      const torch::Tensor gradient = torch::randn_like(outputs[i]);
      const double ms = timed([&] { outputs[i].backward(gradient); });
      if (r >= 0) backward[i].push_back(ms);
    }
    step();
    // Alone: each micro-batch's forward then its backward, one graph at a time.
    for (int i = 0; i < m; ++i) {
      torch::Tensor output;
      const double f = timed([&] { output = device.forward(pieces[i]); });
      const torch::Tensor gradient = torch::randn_like(output);
      const double b = timed([&] { output.backward(gradient); });
      if (r >= 0) {
        forward_alone[i].push_back(f);
        backward_alone[i].push_back(b);
      }
    }
    step();
  }
  std::printf("LibTorch %s device part [0,%zu) batch %lld in %d micro-batches: median ms per micro-batch\n",
              model.name.c_str(), o.split, static_cast<long long>(o.batch), m);
  std::vector<double> medians[4];
  for (int i = 0; i < m; ++i) {
    medians[0].push_back(median(forward[i]));
    medians[1].push_back(median(forward_alone[i]));
    medians[2].push_back(median(backward[i]));
    medians[3].push_back(median(backward_alone[i]));
    std::printf("  micro-batch %d: forward %.3f (alone %.3f), backward %.3f (alone %.3f)\n", i, medians[0].back(),
                medians[1].back(), medians[2].back(), medians[3].back());
  }
  return Json()
      .text("model", model.name)
      .number("split", static_cast<double>(o.split))
      .number("batch", static_cast<double>(o.batch))
      .number("micro_batches", m)
      .number("repeats", o.repeats)
      .numbers("forward_ms", medians[0])
      .numbers("forward_alone_ms", medians[1])
      .numbers("backward_ms", medians[2])
      .numbers("backward_alone_ms", medians[3]);
}

}  // namespace cmlbed::bench
