#include "local_loss.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "cmlbed/base/seed_streams.hpp"
#include "cmlbed/train/state_archive.hpp"
#include "cmlbed/train/tensor_codec.hpp"

namespace cmlbed::train {
namespace {

using trace::EventKind;

net::MessageHeader header_for(net::MessageKind kind, int round, int batch, std::int64_t samples = 0) {
  net::MessageHeader header;
  header.kind = kind;
  header.round = round;
  header.batch = batch;
  header.micro_batch = batch < 0 ? -1 : 0;
  header.micro_batches = batch < 0 ? 0 : 1;
  header.samples = samples;
  return header;
}

}  // namespace

LocalLoss::LocalLoss(const Settings& settings, int rank, int devices, MPI_Comm comm)
    : rank_(rank), devices_(devices), settings_(training_settings(settings)), privacy_(privacy_settings(settings)),
      data_(load_training_data(settings, rank, devices, comm)),
      split_(static_cast<std::size_t>(settings.model.split.all().value())),
      upload_every_(settings.localloss.upload_every) {
  const std::vector<model::LayerStats> stats = model::layer_stats(settings_.model);
  const std::size_t layers = stats.size();
  if (split_ < 1 || split_ >= layers) {  // validation refuses it first (setup/validate.cpp)
    throw std::invalid_argument("experiment.method = localloss needs a device part and a server part: model.split = " +
                                std::to_string(split_) + ", allowed 1.." + std::to_string(layers - 1));
  }
  device_cost_ = model::part_cost(stats, 0, split_, false);
  server_cost_ = model::part_cost(stats, split_, layers, false);  // no gradient goes back
  // Every device starts from the same head, as from the same part: they are averaged.
  const auto make_head = [&] {
    return std::make_unique<ProjectionHead>(stats[split_ - 1].output_shape, settings.localloss.head_hidden,
                                            stats.back().output_shape.front(),
                                            stream_seed(settings_.seed, "localloss_head"));
  };
  if (rank == 0) {
    server_part_ = std::make_unique<model::ModelPart>(settings_.model, split_, layers, settings_.seed);
    if (!server_part_->parameters().empty()) server_optimizer_ = make_optimizer(*server_part_, settings_);
    device_average_ = std::make_unique<model::ModelPart>(settings_.model, 0, split_, settings_.seed);
    head_average_ = make_head();
    head_parameters_ = head_average_->parameter_count();
  } else {
    device_part_ = std::make_unique<model::ModelPart>(settings_.model, 0, split_, settings_.seed);
    head_ = make_head();
    head_forward_flops_ = head_->forward_flops_per_sample();
    head_parameters_ = head_->parameter_count();
    std::vector<torch::Tensor> parameters = device_part_->parameters();
    for (const auto& p : head_->parameters()) parameters.push_back(p);
    device_optimizer_ = make_optimizer(parameters, settings_);
    batches_ = std::make_unique<LocalBatches>(data_.own_positions(), settings_.seed, rank);
  }
}

torch::Tensor LocalLoss::flat_device_side(model::ModelPart& part, ProjectionHead& head) const {
  return torch::cat({flat_state(part), flat_state(head)});
}

void LocalLoss::load_device_side(model::ModelPart& part, ProjectionHead& head, const torch::Tensor& flat) const {
  const std::int64_t part_values = flat_state(part).numel();
  load_flat_state(part, flat.narrow(0, 0, part_values));
  load_flat_state(head, flat.narrow(0, part_values, flat.numel() - part_values));
}

std::int64_t LocalLoss::batches_of(int device) const {
  return batches_per_round(data_.partitions[static_cast<std::size_t>(device - 1)].size(), settings_);
}

void LocalLoss::run_round(const RoundContext& context) {
  if (rank_ != 0) return train_device_round(context);
  serve_round(context);
}

// ---- device side ----

void LocalLoss::train_device_round(const RoundContext& context) {
  const bool aggregating = settings_.aggregates_after(context.round);
  net::RecvHandle average;
  if (aggregating) average = context.transport.post_recv(0, net::MessageKind::model);
  const auto batches = batches_->round(context.round, settings_);
  std::vector<net::SendHandle> uploads;
  for (std::size_t b = 0; b < batches.size(); ++b) {
    const int batch = static_cast<int>(b);
    const torch::Tensor images = images_tensor(data_.own, batches[b]);
    const torch::Tensor labels = labels_tensor(data_.own, batches[b]);
    const auto n = static_cast<double>(images.size(0));
    torch::Tensor activation, loss;
    {
      auto stage = compute_stage(context, EventKind::forward, batch, 0,
                                 n * (device_cost_.forward_per_sample + head_forward_flops_));
      activation = device_part_->forward(images);
      loss = batch_loss(head_->forward(activation), labels, images.size(0));
    }
    {
      // The head's backward: about twice its forward (gradients of inputs and weights).
      auto stage = compute_stage(context, EventKind::backward, batch, 0,
                                 n * (device_cost_.backward_per_sample + 2 * head_forward_flops_));
      loss.backward();
    }
    {
      auto stage = compute_stage(context, EventKind::step, batch, -1,
                                 step_flops(device_cost_.parameters + head_parameters_, settings_));
      device_optimizer_->step();
      device_optimizer_->zero_grad();
    }
    if (!uploads_batch(b)) continue;
    // The activation of this batch's forward, before the step changed the weights.
    net::MessageHeader header = header_for(net::MessageKind::activation, context.round, batch);
    // [privacy]: clipped and noised on its way out (nothing comes back to flow through).
    const torch::Tensor released =
        privatize_activation(activation.detach(), privacy_, noise_seed(settings_.seed, rank_, context.round, batch, 0));
    uploads.push_back(context.transport.send(0, header, activation_payload(released, labels, header)));
  }
  for (auto& upload : uploads) wait_or_throw(upload, context, 0, "activation upload");
  if (!aggregating) return;
  net::MessageHeader header =
      header_for(net::MessageKind::model, context.round, -1, static_cast<std::int64_t>(batches_->samples()));
  net::SendHandle sent =
      context.transport.send(0, header, tensor_payload(flat_device_side(*device_part_, *head_), header));
  load_device_side(*device_part_, *head_, tensor_from(receive_or_throw(average, context, 0, "averaged device part")));
  if (settings_.reset_optimizer_state) {
    std::vector<torch::Tensor> parameters = device_part_->parameters();
    for (const auto& p : head_->parameters()) parameters.push_back(p);
    device_optimizer_ = make_optimizer(parameters, settings_);
  }
  wait_or_throw(sent, context, 0, "device part upload");
}

// ---- server side ----

// The uploads of mini-batch index b, device by device in device order (CSE-FSL's server
// takes them as they arrive; the order of the steps on its one part is part of the
// result, and a run must repeat exactly), then the averaging when the round has one.
void LocalLoss::serve_round(const RoundContext& context) {
  std::int64_t most = 0;
  for (int device = 1; device <= devices_; ++device) most = std::max(most, batches_of(device));
  for (std::int64_t b = 0; b < most; ++b) {
    if (!uploads_batch(static_cast<std::size_t>(b))) continue;
    std::map<int, net::RecvHandle> uploads;
    for (int device = 1; device <= devices_; ++device) {
      if (b < batches_of(device)) uploads[device] = context.transport.post_recv(device, net::MessageKind::activation);
    }
    for (auto& [device, upload] : uploads) {
      serve_upload(context, receive_or_throw(upload, context, device, "activation upload"));
    }
  }
  if (settings_.aggregates_after(context.round)) aggregate(context);
}

void LocalLoss::serve_upload(const RoundContext& context, const net::Message& message) {
  auto [activation, labels] = activation_from(message);
  const std::int64_t n = activation.size(0);
  const int batch = message.header.batch;
  torch::Tensor loss;
  {
    auto stage = compute_stage(context, EventKind::forward, batch, 0,
                               static_cast<double>(n) * server_cost_.forward_per_sample);
    loss = batch_loss(server_part_->forward(activation), labels, n);
  }
  if (!server_optimizer_) return;  // a server part without weights has nothing to train
  {
    auto stage = compute_stage(context, EventKind::backward, batch, 0,
                               static_cast<double>(n) * server_cost_.backward_per_sample);
    loss.backward();
  }
  auto stage = compute_stage(context, EventKind::step, batch, -1, step_flops(server_cost_.parameters, settings_));
  server_optimizer_->step();
  server_optimizer_->zero_grad();
}

// FedAvg of the devices' parts and heads, weighted by their samples.
void LocalLoss::aggregate(const RoundContext& context) {
  std::vector<net::RecvHandle> uploads;
  for (int device = 1; device <= devices_; ++device) {
    uploads.push_back(context.transport.post_recv(device, net::MessageKind::model));
  }
  std::vector<torch::Tensor> sides;
  std::vector<double> weights;
  for (int device = 1; device <= devices_; ++device) {
    const net::Message message =
        receive_or_throw(uploads[static_cast<std::size_t>(device - 1)], context, device, "device part upload");
    sides.push_back(tensor_from(message));
    weights.push_back(static_cast<double>(message.header.samples));
  }
  {
    auto stage = compute_stage(context, EventKind::aggregate);
    load_device_side(*device_average_, *head_average_, weighted_average(sides, weights));
  }
  const torch::Tensor average = flat_device_side(*device_average_, *head_average_);
  std::vector<net::SendHandle> replies;
  for (int device = 1; device <= devices_; ++device) {
    net::MessageHeader header = header_for(net::MessageKind::model, context.round, -1);
    replies.push_back(context.transport.send(device, header, tensor_payload(average, header)));
  }
  for (int device = 1; device <= devices_; ++device) {
    wait_or_throw(replies[static_cast<std::size_t>(device - 1)], context, device, "averaged device part");
  }
}

// ---- evaluation, final weights, checkpoints ----

std::optional<Evaluation> LocalLoss::evaluate(const RoundContext& context) {
  // The server holds the average; between averagings there is nothing new to test.
  if (rank_ != 0 || !settings_.aggregates_after(context.round)) return std::nullopt;
  auto stage = compute_stage(context, EventKind::evaluate);
  return evaluate_aggregated(*device_average_, *server_part_, data_.test, data_.train_labels, data_.partitions,
                             context.evaluation_scope);
}

std::vector<std::pair<std::string, std::vector<float>>> LocalLoss::final_state() {
  return {{"device", flat_state_values(*device_average_)},
          {"head", flat_state_values(*head_average_)},
          {"server", flat_state_values(*server_part_)}};
}

StateDescription LocalLoss::state() {
  StateDescription state;
  if (rank_ != 0) {
    return state.module("device_part", *device_part_).module("head", *head_).optimizer("device_optimizer",
                                                                                       device_optimizer_.get());
  }
  return state.module("server_part", *server_part_)
      .optimizer("server_optimizer", server_optimizer_.get())
      .module("device_average", *device_average_)
      .module("head_average", *head_average_);
}

void LocalLoss::save_state(torch::serialize::OutputArchive& archive) { state().save(archive); }

void LocalLoss::load_state(torch::serialize::InputArchive& archive) { state().load(archive); }

}  // namespace cmlbed::train
