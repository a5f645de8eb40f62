#include "step_cost.hpp"

#include <torch/torch.h>

#include "cmlbed/model/split_model.hpp"
#include "cmlbed/train/local_training.hpp"

namespace cmlbed::bench {

Json step_cost(const std::map<std::string, std::string>& options) {
  const auto get = [&](const char* key, const char* fallback) {
    const auto found = options.find(key);
    return found == options.end() ? std::string(fallback) : found->second;
  };
  model::ModelOptions model{get("model", "vgg5"), parse_image_shape(get("input", "1x28x28")), 10};
  const auto split = static_cast<std::size_t>(std::stoul(get("split", "4")));
  const std::int64_t batch = std::stoll(get("batch", "32"));
  const int threads = std::stoi(get("threads", "1"));
  const int repeats = std::stoi(get("repeats", "50"));
  // Untimed steps first, as scripts/bench-step-pytorch.py does (5): the first steps
  // grow the allocator, create the optimizer's momentum buffers and pick kernels.
  const int warmup = std::max(0, std::stoi(get("warmup", "5")));
  torch::set_num_threads(threads);

  const std::size_t layers = model::layer_count(model);
  model::ModelPart device(model, 0, split, 1), server(model, split, layers, 1);
  torch::Tensor activation;
  {
    torch::NoGradGuard no_grad;
    activation = device.forward(torch::rand({batch, model.input.channels, model.input.height, model.input.width}));
  }
  const torch::Tensor labels = torch::randint(0, 10, {batch}, torch::kInt64);
  train::TrainingSettings settings;
  settings.lr = 0.01;
  auto optimizer = train::make_optimizer(server, settings);
  std::vector<double> milliseconds;
  for (int i = -warmup; i < repeats; ++i) {  // < 0: warm-up
    const auto start = std::chrono::steady_clock::now();
    torch::Tensor input = activation.clone().requires_grad_(true);
    torch::Tensor loss = torch::nn::functional::cross_entropy(server.forward(input), labels);
    loss.backward();
    optimizer->step();
    optimizer->zero_grad();
    if (i >= 0) milliseconds.push_back(1e3 * seconds_since(start));
  }
  std::printf("LibTorch %s server part [%zu,%zu) batch %lld, %d thread(s): median %.3f ms per step\n",
              model.name.c_str(), split, layers, static_cast<long long>(batch), threads, median(milliseconds));
  return Json()
      .text("framework", "libtorch")
      .text("model", model.name)
      .number("split", static_cast<double>(split))
      .number("batch", static_cast<double>(batch))
      .number("threads", threads)
      .number("warmup", warmup)
      .numbers("step_ms", milliseconds)
      .number("median_step_ms", median(milliseconds));
}

}  // namespace cmlbed::bench
