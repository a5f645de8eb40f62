#include "cmlbed/base/seed_streams.hpp"
#include "cmlbed/train/local_training.hpp"

#include <random>
#include <stdexcept>

#include "cmlbed/setup/derived.hpp"
#include "cmlbed/train/tensor_codec.hpp"

namespace cmlbed::train {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(torch::nn::Module& module,
                                                        const TrainingSettings& s) {
  return make_optimizer(module.parameters(), s);
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(std::vector<torch::Tensor> parameters,
                                                        const TrainingSettings& s) {
  if (parameters.empty()) return nullptr;
  if (s.optimizer == "adam") {
    return std::make_unique<torch::optim::Adam>(
        parameters, torch::optim::AdamOptions(s.lr).weight_decay(s.weight_decay));
  }
  return std::make_unique<torch::optim::SGD>(
      parameters, torch::optim::SGDOptions(s.lr).momentum(s.momentum).weight_decay(s.weight_decay));
}

LocalBatches::LocalBatches(std::vector<std::size_t> indices, std::uint64_t seed, int device)
    : indices_(std::move(indices)), seed_(seed), device_(device) {}

std::int64_t batches_per_round(std::size_t samples, const TrainingSettings& s) {
  if (s.local_iterations > 0) return s.local_iterations;
  return s.local_epochs * static_cast<std::int64_t>(samples / static_cast<std::size_t>(s.batch_size));
}

std::vector<std::vector<std::size_t>> LocalBatches::round(int round, const TrainingSettings& s) const {
  const auto batch = static_cast<std::size_t>(s.batch_size);
  if (indices_.size() < batch) {
    throw std::runtime_error("device " + std::to_string(device_) + " holds " +
                             std::to_string(indices_.size()) + " samples, fewer than one batch of " +
                             std::to_string(batch));
  }
  // A 64-bit Mersenne Twister seeded from (seed, device, round); the shuffle is our own
  // Fisher-Yates on its raw output, so the order is the same on every platform.
  std::mt19937_64 random(stream_seed(seed_, "batch_order", {device_, round}));
  const std::int64_t wanted = batches_per_round(indices_.size(), s);
  std::vector<std::vector<std::size_t>> batches;
  std::vector<std::size_t> order = indices_;
  while (static_cast<std::int64_t>(batches.size()) < wanted) {
    for (std::size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[random() % (i + 1)]);
    for (std::size_t start = 0; start + batch <= order.size() &&
                                static_cast<std::int64_t>(batches.size()) < wanted;
         start += batch) {
      batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(start),
                           order.begin() + static_cast<std::ptrdiff_t>(start + batch));
    }
  }
  return batches;
}

torch::Tensor images_tensor(const data::ImageSet& set, const std::vector<std::size_t>& indices) {
  const std::size_t sample = set.sample_bytes();
  const bool floats = set.pixel_type == data::PixelType::float32;
  torch::Tensor stored = torch::empty({static_cast<std::int64_t>(indices.size()), set.channels, set.height, set.width},
                                      floats ? torch::kFloat32 : torch::kUInt8);
  auto* out = static_cast<std::uint8_t*>(stored.data_ptr());
  for (std::size_t i = 0; i < indices.size(); ++i) {
    std::memcpy(out + i * sample, set.pixels.data() + indices[i] * sample, sample);
  }
  torch::Tensor images = floats ? stored : stored.to(torch::kFloat32).div_(255.0);
  if (!set.channel_mean.empty()) {
    const auto per_channel = [&](const std::vector<float>& values) {
      return torch::tensor(values, torch::kFloat32).view({1, set.channels, 1, 1});
    };
    images.sub_(per_channel(set.channel_mean)).div_(per_channel(set.channel_std));
  }
  return images;
}

torch::Tensor labels_tensor(const data::ImageSet& set, const std::vector<std::size_t>& indices) {
  torch::Tensor labels = torch::empty({static_cast<std::int64_t>(indices.size())}, torch::kInt64);
  auto* out = labels.data_ptr<std::int64_t>();
  for (std::size_t i = 0; i < indices.size(); ++i) out[i] = set.labels[indices[i]];
  return labels;
}

torch::Tensor batch_loss(const torch::Tensor& logits, const torch::Tensor& labels,
                         std::int64_t batch_size) {
  return torch::nn::functional::cross_entropy(
             logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum)) /
         static_cast<double>(batch_size);
}

ClassScores score_by_class(model::ModelPart& device_part, model::ModelPart& server_part,
                           const data::ImageSet& test) {
  torch::NoGradGuard no_grad;
  device_part.eval();
  server_part.eval();
  const auto classes = static_cast<std::size_t>(test.num_classes);
  ClassScores scores{std::vector<std::int64_t>(classes, 0), std::vector<std::int64_t>(classes, 0),
                     std::vector<double>(classes, 0.0)};
  constexpr std::size_t kBatch = 500;
  for (std::size_t start = 0; start < test.size(); start += kBatch) {
    std::vector<std::size_t> indices;
    for (std::size_t i = start; i < std::min(test.size(), start + kBatch); ++i) indices.push_back(i);
    const torch::Tensor labels = labels_tensor(test, indices);
    const torch::Tensor logits = server_part.forward(device_part.forward(images_tensor(test, indices)));
    const torch::Tensor losses = torch::nn::functional::cross_entropy(
        logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
    const torch::Tensor hits = logits.argmax(1).eq(labels);
    const auto loss = losses.to(torch::kFloat64).contiguous();
    const auto hit = hits.to(torch::kInt64).contiguous();
    const double* sample_loss = loss.data_ptr<double>();
    const std::int64_t* sample_hit = hit.data_ptr<std::int64_t>();
    for (std::size_t i = 0; i < indices.size(); ++i) {
      const std::size_t c = test.labels[indices[i]];
      ++scores.samples[c];
      scores.correct[c] += sample_hit[i];
      scores.loss[c] += sample_loss[i];
    }
  }
  device_part.train();
  server_part.train();
  return scores;
}

Evaluation evaluate_aggregated(model::ModelPart& device_part, model::ModelPart& server_part,
                               const data::ImageSet& test, const std::vector<std::uint8_t>& train_labels,
                               const std::vector<std::vector<std::size_t>>& partitions,
                               EvaluationScope scope) {
  const ClassScores scores = score_by_class(device_part, server_part, test);
  Evaluation evaluation;
  if (scope == EvaluationScope::global) {
    evaluation.has_global = true;
    evaluation.global = overall_score(scores);
    return evaluation;
  }
  const auto classes = static_cast<std::size_t>(test.num_classes);
  for (std::size_t d = 0; d < partitions.size(); ++d) {
    evaluation.devices[static_cast<int>(d) + 1] =
        device_score(scores, label_shares(train_labels, partitions[d], classes));
  }
  return evaluation;
}

std::optional<Evaluation> evaluate_personalised(const RoundContext& context, torch::nn::Module* device_part,
                                                const std::vector<std::uint8_t>& train_labels,
                                                const std::vector<std::vector<std::size_t>>& partitions,
                                                std::int64_t classes, const PersonalScore& score) {
  if (context.rank != 0) {
    net::MessageHeader header;
    header.kind = net::MessageKind::model;
    header.round = context.round;
    net::SendHandle sent = context.transport.send(0, header, tensor_payload(flat_state(*device_part), header),
                                                  net::Transport::Shaping::none);
    wait_or_throw(sent, context, 0, "device part for evaluation");
    return std::nullopt;
  }
  std::vector<net::RecvHandle> parts;
  for (int device = 1; device <= context.devices; ++device) {
    parts.push_back(context.transport.post_recv(device, net::MessageKind::model));
  }
  std::vector<torch::Tensor> states;
  for (int device = 1; device <= context.devices; ++device) {
    states.push_back(tensor_from(
        receive_or_throw(parts[static_cast<std::size_t>(device - 1)], context, device, "device part for evaluation")));
  }
  auto stage = compute_stage(context, trace::EventKind::evaluate);
  Evaluation evaluation;
  Score sum;
  for (int device = 1; device <= context.devices; ++device) {
    const ClassScores scores = score(device, states[static_cast<std::size_t>(device - 1)]);
    if (context.evaluation_scope == EvaluationScope::per_device) {
      evaluation.devices[device] = device_score(
          scores, label_shares(train_labels, partitions[static_cast<std::size_t>(device - 1)],
                               static_cast<std::size_t>(classes)));
    } else {
      const Score one = overall_score(scores);
      sum.loss += one.loss / context.devices;
      sum.accuracy += one.accuracy / context.devices;
      sum.samples = one.samples;
    }
  }
  if (context.evaluation_scope == EvaluationScope::global) {
    evaluation.has_global = true;
    evaluation.global = sum;
  }
  return evaluation;
}

double step_flops(std::int64_t parameters, const TrainingSettings& settings) {
  double per_weight = settings.optimizer == "adam" ? 13 : 2 + (settings.momentum > 0 ? 2 : 0);
  if (settings.weight_decay > 0) per_weight += 2;
  return per_weight * static_cast<double>(parameters);
}

torch::Tensor weighted_average(const std::vector<torch::Tensor>& states,
                               const std::vector<double>& weights) {
  if (states.empty() || states.size() != weights.size()) {
    throw std::invalid_argument("weighted_average: one weight per state needed");
  }
  double total = 0;
  for (double w : weights) total += w;
  torch::Tensor sum = torch::zeros_like(states[0], torch::kFloat64);
  for (std::size_t i = 0; i < states.size(); ++i) sum.add_(states[i].to(torch::kFloat64), weights[i]);
  return sum.div_(total).to(torch::kFloat32);
}

}  // namespace cmlbed::train
