#include "u_shaped.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

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

std::unique_ptr<torch::optim::Optimizer> optimizer_if_weights(model::ModelPart& part, const TrainingSettings& s) {
  return part.parameters().empty() ? nullptr : make_optimizer(part, s);
}

}  // namespace

UShaped::UShaped(const Settings& settings, int rank, int devices, MPI_Comm comm)
    : rank_(rank), devices_(devices), settings_(training_settings(settings)), privacy_(privacy_settings(settings)),
      data_(load_training_data(settings, rank, devices, comm)) {
  const std::vector<model::LayerStats> stats = model::layer_stats(settings_.model);
  const std::size_t layers = stats.size();
  tail_ = settings.ushaped.tail ? static_cast<std::size_t>(*settings.ushaped.tail) : layers - 1;
  for (int d = 1; d <= devices; ++d) {
    splits_.push_back(static_cast<std::size_t>(settings.model.split.of(d).value()));
    if (splits_.back() > tail_ || tail_ > layers) {  // validation refuses it first (setup/validate.cpp)
      throw std::invalid_argument("ushaped: device " + std::to_string(d) + " cuts at " +
                                  std::to_string(splits_.back()) + ", after its tail at " + std::to_string(tail_));
    }
  }
  const auto& seed = settings_.seed;
  if (rank == 0) {
    for (int d = 1; d <= devices; ++d) {
      const std::size_t split = splits_[static_cast<std::size_t>(d - 1)];
      Middle& middle = middles_.emplace_back();
      middle.part = std::make_unique<model::ModelPart>(settings_.model, split, tail_, seed);
      middle.optimizer = optimizer_if_weights(*middle.part, settings_);
      middle.cost = model::part_cost(stats, split, tail_, true);
      head_shadows_.push_back(std::make_unique<model::ModelPart>(settings_.model, 0, split, seed));
    }
    tail_shadow_ = std::make_unique<model::ModelPart>(settings_.model, tail_, layers, seed);
    whole_model_ = std::make_unique<model::ModelPart>(settings_.model, 0, layers, seed);
    no_layers_ = std::make_unique<model::ModelPart>(settings_.model, layers, layers, seed);
  } else {
    const std::size_t split = splits_[static_cast<std::size_t>(rank - 1)];
    head_ = std::make_unique<model::ModelPart>(settings_.model, 0, split, seed);
    tail_part_ = std::make_unique<model::ModelPart>(settings_.model, tail_, layers, seed);
    std::vector<torch::Tensor> parameters = head_->parameters();
    for (const auto& p : tail_part_->parameters()) parameters.push_back(p);
    device_optimizer_ = make_optimizer(parameters, settings_);
    head_cost_ = model::part_cost(stats, 0, split, false);
    tail_cost_ = model::part_cost(stats, tail_, layers, true);
    batches_ = std::make_unique<LocalBatches>(data_.own_positions(), seed, rank);
  }
}

std::int64_t UShaped::batches_of(int device) const {
  return batches_per_round(data_.partitions[static_cast<std::size_t>(device - 1)].size(), settings_);
}

void UShaped::run_round(const RoundContext& context) {
  if (rank_ != 0) return train_device_round(context);
  serve_round(context);
}

// ---- device side ----

void UShaped::train_device_round(const RoundContext& context) {
  const bool aggregating = settings_.aggregates_after(context.round);
  net::RecvHandle average;
  if (aggregating) average = context.transport.post_recv(0, net::MessageKind::model);
  const auto batches = batches_->round(context.round, settings_);
  for (std::size_t b = 0; b < batches.size(); ++b) train_batch(context, static_cast<int>(b), batches[b]);
  if (!aggregating) return;
  net::MessageHeader header =
      header_for(net::MessageKind::model, context.round, -1, static_cast<std::int64_t>(batches_->samples()));
  const torch::Tensor mine = torch::cat({flat_state(*head_), flat_state(*tail_part_)});
  net::SendHandle sent = context.transport.send(0, header, tensor_payload(mine, header));
  const torch::Tensor back = tensor_from(receive_or_throw(average, context, 0, "averaged head and tail"));
  const std::int64_t head_values = flat_state(*head_).numel();
  load_flat_state(*head_, back.narrow(0, 0, head_values));
  load_flat_state(*tail_part_, back.narrow(0, head_values, back.numel() - head_values));
  if (settings_.reset_optimizer_state) {
    std::vector<torch::Tensor> parameters = head_->parameters();
    for (const auto& p : tail_part_->parameters()) parameters.push_back(p);
    device_optimizer_ = make_optimizer(parameters, settings_);
  }
  wait_or_throw(sent, context, 0, "head and tail upload");
}

void UShaped::train_batch(const RoundContext& context, int batch, const std::vector<std::size_t>& indices) {
  const torch::Tensor images = images_tensor(data_.own, indices);
  const torch::Tensor labels = labels_tensor(data_.own, indices);
  const auto n = static_cast<double>(images.size(0));
  net::RecvHandle middle_out = context.transport.post_recv(0, net::MessageKind::activation);
  net::RecvHandle head_gradient = context.transport.post_recv(0, net::MessageKind::gradient);
  torch::Tensor activation;
  {
    auto stage = compute_stage(context, EventKind::forward, batch, 0, n * head_cost_.forward_per_sample);
    activation = head_->forward(images);
    // [privacy]: what leaves the device is clipped and noised (the backward flows
    // through the clipping).
    activation = privatize_activation(activation, privacy_, noise_seed(settings_.seed, rank_, context.round, batch, 0));
  }
  net::MessageHeader up = header_for(net::MessageKind::activation, context.round, batch);
  // The activation alone: the labels stay on the device.
  net::SendHandle sent = context.transport.send(0, up, tensor_payload(activation.detach().contiguous(), up));
  const torch::Tensor middle = tensor_from(receive_or_throw(middle_out, context, 0, "middle's output"))
                                   .requires_grad_(true);
  torch::Tensor loss;
  {
    auto stage = compute_stage(context, EventKind::forward, batch, 0, n * tail_cost_.forward_per_sample);
    loss = batch_loss(tail_part_->forward(middle), labels, images.size(0));
  }
  {
    auto stage = compute_stage(context, EventKind::backward, batch, 0, n * tail_cost_.backward_per_sample);
    loss.backward();
  }
  net::MessageHeader gradient_up = header_for(net::MessageKind::gradient, context.round, batch);
  net::SendHandle sent_gradient =
      context.transport.send(0, gradient_up, tensor_payload(middle.grad().contiguous(), gradient_up));
  const torch::Tensor gradient = tensor_from(receive_or_throw(head_gradient, context, 0, "head's gradient"));
  if (activation.requires_grad()) {  // a head with layers (model.split > 0)
    auto stage = compute_stage(context, EventKind::backward, batch, 0, n * head_cost_.backward_per_sample);
    activation.backward(gradient);
  }
  {
    auto stage = compute_stage(context, EventKind::step, batch, -1,
                               step_flops(head_cost_.parameters + tail_cost_.parameters, settings_));
    device_optimizer_->step();
    device_optimizer_->zero_grad();
  }
  wait_or_throw(sent, context, 0, "activation upload");
  wait_or_throw(sent_gradient, context, 0, "tail's gradient upload");
}

// ---- server side ----

// Mini-batch index by index: every device's middle forward (device order), then every
// middle backward, so that the server computes while the devices run their tails.
void UShaped::serve_round(const RoundContext& context) {
  std::int64_t most = 0;
  for (int device = 1; device <= devices_; ++device) most = std::max(most, batches_of(device));
  for (std::int64_t b = 0; b < most; ++b) {
    std::map<int, net::RecvHandle> uploads;
    for (int device = 1; device <= devices_; ++device) {
      if (b < batches_of(device)) uploads[device] = context.transport.post_recv(device, net::MessageKind::activation);
    }
    std::vector<InFlight> jobs;
    std::map<int, net::RecvHandle> gradients;
    for (auto& [device, upload] : uploads) {
      gradients[device] = context.transport.post_recv(device, net::MessageKind::gradient);
      jobs.push_back(serve_forward(context, device, receive_or_throw(upload, context, device, "activation upload")));
    }
    for (InFlight& job : jobs) {
      serve_backward(context, static_cast<int>(b), job,
                     receive_or_throw(gradients[job.device], context, job.device, "tail's gradient"));
    }
  }
  if (settings_.aggregates_after(context.round)) aggregate(context);
}

UShaped::InFlight UShaped::serve_forward(const RoundContext& context, int device, const net::Message& upload) {
  Middle& middle = middles_[static_cast<std::size_t>(device - 1)];
  InFlight job;
  job.device = device;
  job.input = tensor_from(upload).requires_grad_(true);
  job.samples = job.input.size(0);
  const int batch = upload.header.batch;
  {
    auto stage = compute_stage(context, EventKind::forward, batch, 0,
                               static_cast<double>(job.samples) * middle.cost.forward_per_sample);
    job.output = middle.part->forward(job.input);
  }
  net::MessageHeader down = header_for(net::MessageKind::activation, upload.header.round, batch);
  context.transport.send(device, down, tensor_payload(job.output.detach().contiguous(), down)).detach();
  return job;
}

void UShaped::serve_backward(const RoundContext& context, int batch, InFlight& job, const net::Message& gradient) {
  Middle& middle = middles_[static_cast<std::size_t>(job.device - 1)];
  {
    auto stage = compute_stage(context, EventKind::backward, batch, 0,
                               static_cast<double>(job.samples) * middle.cost.backward_per_sample);
    job.output.backward(tensor_from(gradient));
  }
  net::MessageHeader down = header_for(net::MessageKind::gradient, gradient.header.round, batch);
  context.transport.send(job.device, down, tensor_payload(job.input.grad().contiguous(), down)).detach();
  if (!middle.optimizer) return;
  auto stage = compute_stage(context, EventKind::step, batch, -1, step_flops(middle.cost.parameters, settings_));
  middle.optimizer->step();
  middle.optimizer->zero_grad();
}

// FedAvg by layer name, as sfl's: each device's head, the tail and each middle count with
// the device's samples; every layer's average goes into the whole model, the middles, and
// back to each device as its head and the tail.
void UShaped::aggregate(const RoundContext& context) {
  std::vector<net::RecvHandle> uploads;
  for (int device = 1; device <= devices_; ++device) {
    uploads.push_back(context.transport.post_recv(device, net::MessageKind::model));
  }
  std::map<std::string, std::vector<torch::Tensor>> copies;
  std::map<std::string, std::vector<double>> weights;
  const auto add_copy = [&](torch::nn::Module& part, double weight) {
    for (auto& [name, tensor] : named_state(part)) {
      copies[name].push_back(tensor.detach().clone());
      weights[name].push_back(weight);
    }
  };
  for (int device = 1; device <= devices_; ++device) {
    const net::Message message =
        receive_or_throw(uploads[static_cast<std::size_t>(device - 1)], context, device, "head and tail upload");
    const torch::Tensor both = tensor_from(message);
    model::ModelPart& head = *head_shadows_[static_cast<std::size_t>(device - 1)];
    const std::int64_t head_values = flat_state(head).numel();
    load_flat_state(head, both.narrow(0, 0, head_values));
    load_flat_state(*tail_shadow_, both.narrow(0, head_values, both.numel() - head_values));
    const auto weight = static_cast<double>(message.header.samples);
    add_copy(head, weight);
    add_copy(*tail_shadow_, weight);
    add_copy(*middles_[static_cast<std::size_t>(device - 1)].part, weight);
  }
  {
    auto stage = compute_stage(context, EventKind::aggregate);
    std::map<std::string, torch::Tensor> average;
    for (auto& [name, tensors] : copies) average[name] = weighted_average(tensors, weights[name]);
    load_named_state(*whole_model_, average);
    load_named_state(*tail_shadow_, average);
    for (std::size_t d = 0; d < middles_.size(); ++d) {
      load_named_state(*middles_[d].part, average);
      load_named_state(*head_shadows_[d], average);
      if (settings_.reset_optimizer_state) middles_[d].optimizer = optimizer_if_weights(*middles_[d].part, settings_);
    }
  }
  const torch::Tensor tail = flat_state(*tail_shadow_);
  std::vector<net::SendHandle> replies;
  for (int device = 1; device <= devices_; ++device) {
    net::MessageHeader header = header_for(net::MessageKind::model, context.round, -1);
    const torch::Tensor both = torch::cat({flat_state(*head_shadows_[static_cast<std::size_t>(device - 1)]), tail});
    replies.push_back(context.transport.send(device, header, tensor_payload(both, header)));
  }
  for (int device = 1; device <= devices_; ++device) {
    wait_or_throw(replies[static_cast<std::size_t>(device - 1)], context, device, "averaged head and tail");
  }
}

// ---- evaluation, final weights, checkpoints ----

std::optional<Evaluation> UShaped::evaluate(const RoundContext& context) {
  if (rank_ != 0 || !settings_.aggregates_after(context.round)) return std::nullopt;
  auto stage = compute_stage(context, EventKind::evaluate);
  return evaluate_aggregated(*whole_model_, *no_layers_, data_.test, data_.train_labels, data_.partitions,
                             context.evaluation_scope);
}

std::vector<std::pair<std::string, std::vector<float>>> UShaped::final_state() {
  return {{"model", flat_state_values(*whole_model_)}};
}

StateDescription UShaped::state() {
  StateDescription state;
  if (rank_ != 0) {
    return state.module("head", *head_).module("tail", *tail_part_).optimizer("device_optimizer",
                                                                            device_optimizer_.get());
  }
  for (std::size_t d = 0; d < middles_.size(); ++d) {
    const std::string key = "middle_" + std::to_string(d + 1);
    state.module(key, *middles_[d].part).optimizer(key + "_optimizer", middles_[d].optimizer.get());
  }
  return state.module("whole_model", *whole_model_);
}

void UShaped::save_state(torch::serialize::OutputArchive& archive) { state().save(archive); }

void UShaped::load_state(torch::serialize::InputArchive& archive) { state().load(archive); }

}  // namespace cmlbed::train
