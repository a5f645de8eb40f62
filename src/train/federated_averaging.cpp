#include "federated_averaging.hpp"

#include "cmlbed/train/state_archive.hpp"
#include "cmlbed/train/tensor_codec.hpp"

namespace cmlbed::train {
namespace {

using trace::EventKind;

net::MessageHeader model_header(int round, std::int64_t samples) {
  net::MessageHeader header;
  header.kind = net::MessageKind::model;
  header.round = round;
  header.samples = samples;
  return header;
}

}  // namespace

FederatedAveraging::FederatedAveraging(const Settings& settings, int rank, int devices, MPI_Comm comm)
    : rank_(rank), devices_(devices), settings_(training_settings(settings)), privacy_(privacy_settings(settings)),
      data_(load_training_data(settings, rank, devices, comm)) {
  const std::vector<model::LayerStats> stats = model::layer_stats(settings_.model);
  const std::size_t layers = stats.size();
  cost_ = model::part_cost(stats, 0, layers, false);
  model_ = std::make_unique<model::ModelPart>(settings_.model, 0, layers, settings_.seed);
  if (rank == 0) {
    no_layers_ = std::make_unique<model::ModelPart>(settings_.model, layers, layers, settings_.seed);
  } else {
    optimizer_ = make_optimizer(*model_, settings_);
    batches_ = std::make_unique<LocalBatches>(data_.own_positions(),
                                              settings_.seed, rank);
    if (privacy_.on()) round_start_ = flat_state(*model_);
  }
}

void FederatedAveraging::run_round(const RoundContext& context) {
  if (rank_ == 0) {
    if (settings_.aggregates_after(context.round)) aggregate(context);
  } else {
    train_device_round(context);
  }
}

void FederatedAveraging::train_device_round(const RoundContext& context) {
  const bool aggregating = settings_.aggregates_after(context.round);
  net::RecvHandle average;
  if (aggregating) average = context.transport.post_recv(0, net::MessageKind::model);
  const auto batches = batches_->round(context.round, settings_);
  for (std::size_t b = 0; b < batches.size(); ++b) {
    const int batch = static_cast<int>(b);
    const torch::Tensor images = images_tensor(data_.own, batches[b]);
    const torch::Tensor labels = labels_tensor(data_.own, batches[b]);
    const auto samples = static_cast<double>(images.size(0));
    torch::Tensor loss;
    {
      auto stage = compute_stage(context, EventKind::forward, batch, -1, samples * cost_.forward_per_sample);
      loss = batch_loss(model_->forward(images), labels, settings_.batch_size);
    }
    {
      auto stage = compute_stage(context, EventKind::backward, batch, -1, samples * cost_.backward_per_sample);
      loss.backward();
    }
    auto stage = compute_stage(context, EventKind::step, batch, -1, step_flops(cost_.parameters, settings_));
    optimizer_->step();
    optimizer_->zero_grad();
  }
  if (!aggregating) return;  // keep training our own model until the next aggregation
  net::MessageHeader header = model_header(context.round, static_cast<std::int64_t>(batches_->samples()));
  torch::Tensor upload = flat_state(*model_);
  if (privacy_.on()) {
    // DP-FedAvg: the weights' update since the last aggregation, clipped to L2 norm
    // privacy.clip (the buffers travel as they are: privacy.hpp).
    auto stage = compute_stage(context, EventKind::compute);
    upload = clip_model_update(upload, round_start_, parameter_entries(*model_), privacy_.clip);
  }
  net::SendHandle sent = context.transport.send(0, header, tensor_payload(upload, header));
  load_flat_state(*model_, tensor_from(receive_or_throw(average, context, 0, "averaged model")));
  // train.optimizer_state = reset: the moments (or momentum) were gathered on this
  // device's own weights, which the average has just replaced.
  if (settings_.reset_optimizer_state) optimizer_ = make_optimizer(*model_, settings_);
  if (privacy_.on()) round_start_ = flat_state(*model_);
  wait_or_throw(sent, context, 0, "model upload");
}

void FederatedAveraging::aggregate(const RoundContext& context) {
  std::vector<net::RecvHandle> uploads;
  for (int device = 1; device <= devices_; ++device) {
    uploads.push_back(context.transport.post_recv(device, net::MessageKind::model));
  }
  std::vector<torch::Tensor> models;
  std::vector<double> weights;
  for (int device = 1; device <= devices_; ++device) {
    const net::Message message =
        receive_or_throw(uploads[static_cast<std::size_t>(device - 1)], context, device, "model upload");
    models.push_back(tensor_from(message));
    weights.push_back(static_cast<double>(message.header.samples));
  }
  {
    auto stage = compute_stage(context, EventKind::aggregate);
    torch::Tensor averaged = weighted_average(models, weights);
    if (privacy_.on()) {
      // DP-FedAvg: Gaussian noise of noise_multiplier x clip / devices on the weights' average.
      averaged = noise_model_average(averaged, parameter_entries(*model_),
                                     privacy_.noise_multiplier * privacy_.clip / devices_,
                                     noise_seed(settings_.seed, 0, context.round, -1, -1));
    }
    load_flat_state(*model_, averaged);
  }
  // Every device gets the same average: flatten it once.
  const torch::Tensor average = flat_state(*model_);
  std::vector<net::SendHandle> replies;
  for (int device = 1; device <= devices_; ++device) {
    net::MessageHeader header = model_header(context.round, 0);
    replies.push_back(context.transport.send(device, header, tensor_payload(average, header)));
  }
  for (int device = 1; device <= devices_; ++device) {
    wait_or_throw(replies[static_cast<std::size_t>(device - 1)], context, device, "averaged model");
  }
}

std::optional<Evaluation> FederatedAveraging::evaluate(const RoundContext& context) {
  // The server holds the average; between aggregations there is nothing new to test.
  if (rank_ != 0 || !settings_.aggregates_after(context.round)) return std::nullopt;
  auto stage = compute_stage(context, EventKind::evaluate);
  return evaluate_aggregated(*model_, *no_layers_, data_.test, data_.train_labels, data_.partitions,
                             context.evaluation_scope);
}

std::vector<std::pair<std::string, std::vector<float>>> FederatedAveraging::final_state() {
  return {{"model", flat_state_values(*model_)}};
}

// A device: its model (trained on since the last average when aggregate_every > 1) and
// its optimizer (fresh after an average with train.optimizer_state = reset: an empty
// state, saved and loaded as any other); the server: the last average. Batches follow
// (seed, device, round).
StateDescription FederatedAveraging::state() {
  StateDescription state;
  state.module("model", *model_).optimizer("optimizer", optimizer_.get());
  if (round_start_.defined()) state.tensor("round_start", round_start_);
  return state;
}

void FederatedAveraging::save_state(torch::serialize::OutputArchive& archive) { state().save(archive); }

void FederatedAveraging::load_state(torch::serialize::InputArchive& archive) { state().load(archive); }

}  // namespace cmlbed::train
