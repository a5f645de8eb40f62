#include "split_learning.hpp"

#include <algorithm>
#include <map>

#include "cmlbed/model/zoo.hpp"
#include "cmlbed/sim/round_rules.hpp"
#include "cmlbed/train/server_streams.hpp"
#include "cmlbed/train/state_archive.hpp"
#include "cmlbed/train/tensor_codec.hpp"

namespace cmlbed::train {
namespace {

using trace::EventKind;

net::MessageHeader header_for(net::MessageKind kind, int round, int batch, int micro_batch,
                              int micro_batches) {
  net::MessageHeader header;
  header.kind = kind;
  header.round = round;
  header.batch = batch;
  header.micro_batch = micro_batch;
  header.micro_batches = micro_batches;
  return header;
}

net::SendHandle send_state(const RoundContext& context, int peer, torch::nn::Module& module,
                           std::int64_t samples,
                           net::Transport::Shaping shaping = net::Transport::Shaping::link) {
  net::MessageHeader header = header_for(net::MessageKind::model, context.round, -1, -1, 0);
  header.samples = samples;
  net::Payload payload = tensor_payload(flat_state(module), header);
  return context.transport.send(peer, header, std::move(payload), shaping);
}

}  // namespace

SplitLearning::SplitLearning(const Settings& settings, int rank, int devices, MPI_Comm comm)
    : traits_(method_traits(settings.experiment.method)), rank_(rank), devices_(devices), settings_(training_settings(settings)), privacy_(privacy_settings(settings)),
      data_(load_training_data(settings, rank, devices, comm)) {
  const std::vector<model::LayerStats> stats = model::layer_stats(settings_.model);
  const std::size_t layers = stats.size();
  for (int device = 1; device <= devices; ++device) {
    splits_.push_back(static_cast<std::size_t>(settings.model.split.of(device).value()));
    micro_batches_.push_back(traits_.micro_batches
                                 ? static_cast<int>(settings.pipar.micro_batches.of(device).value())
                                 : 1);
  }
  if (traits_.server_replicas) server_streams_ = static_cast<int>(settings.train.server_streams);
  if (traits_.takes_turns) batches_per_turn_ = settings.sl.batches_per_turn;
  personalised_ = settings.train.personalised || traits_.personalised_always;
  server_threads_ = static_cast<int>(settings.train.server_threads);
  if (rank == 0) {
    const int replicas = one_server_part() ? 1 : devices;
    for (int i = 0; i < replicas; ++i) {
      ServerPart server;
      server.part = std::make_unique<model::ModelPart>(settings_.model, splits_[static_cast<std::size_t>(i)],
                                                       layers, settings_.seed);
      server.optimizer = make_optimizer(*server.part, settings_);
      server_parts_.push_back(std::move(server));
    }
    for (int device = 1; device <= devices; ++device) {
      // The server part returns its input's gradient, so that input needs one.
      server_costs_.push_back(model::part_cost(stats, split_for(device), layers, true));
    }
    for (int device = 1; device <= devices; ++device) {
      device_shadows_.push_back(std::make_unique<model::ModelPart>(
          settings_.model, 0, split_for(device), settings_.seed));
    }
    if (!personalised_) whole_model_ = std::make_unique<model::ModelPart>(settings_.model, 0, layers, settings_.seed);
    no_layers_ = std::make_unique<model::ModelPart>(settings_.model, layers, layers, settings_.seed);
  } else {
    device_part_ = std::make_unique<model::ModelPart>(settings_.model, 0, split_for(rank), settings_.seed);
    device_optimizer_ = make_optimizer(*device_part_, settings_);
    device_cost_ = model::part_cost(stats, 0, split_for(rank), false);
    batches_ = std::make_unique<LocalBatches>(data_.own_positions(),
                                              settings_.seed, rank);
  }
}

int SplitLearning::micro_batches_for(int device) const {
  return micro_batches_[static_cast<std::size_t>(device - 1)];
}

std::size_t SplitLearning::split_for(int device) const {
  return splits_[static_cast<std::size_t>(device - 1)];
}

SplitLearning::ServerPart& SplitLearning::server_for(int device) {
  return server_parts_[one_server_part() ? 0 : static_cast<std::size_t>(device - 1)];
}

void SplitLearning::run_round(const RoundContext& context) {
  if (rank_ != 0) return train_device_round(context);
  if (traits_.takes_turns) return serve_sequential_round(context);
  if (traits_.serves_in_device_order) return serve_in_device_order(context);
  if (traits_.serves_batches_together) return serve_batches_together(context);
  serve_parallel_round(context);
}

// ---- device side ----

void SplitLearning::train_device_round(const RoundContext& context) {
  const auto batches = batches_->round(context.round, settings_);
  if (traits_.takes_turns) return take_turns(context, batches);
  for (std::size_t b = 0; b < batches.size(); ++b) train_batch(context, static_cast<int>(b), batches[b]);
  // Personalised: the device part is ours alone; nothing of it leaves the device.
  if (settings_.aggregates_after(context.round) && !personalised_) exchange_device_part(context);
}

// sl: our turns of the round (sim::sl_turns, as the server orders them): wait for the
// device part as the previous device left it, train our next mini-batches, hand it back.
// Personalised: wait for the server's word that our turn starts, train our own part.
void SplitLearning::take_turns(const RoundContext& context, const std::vector<std::vector<std::size_t>>& batches) {
  for (const sim::SlTurn& turn : sim::sl_turns({static_cast<std::int64_t>(batches.size())}, batches_per_turn_)) {
    if (personalised_) {
      net::RecvHandle start = context.transport.post_recv(0, net::MessageKind::control);
      receive_or_throw(start, context, 0, "turn start");
    } else {
      net::RecvHandle handover = context.transport.post_recv(0, net::MessageKind::model);
      load_flat_state(*device_part_, tensor_from(receive_or_throw(handover, context, 0, "device part handover")));
      // train.optimizer_state = reset: our last turn's moments belong to weights that
      // other devices have trained on since.
      if (settings_.reset_optimizer_state) device_optimizer_ = make_optimizer(*device_part_, settings_);
    }
    for (std::int64_t b = turn.first_batch; b < turn.first_batch + turn.batches; ++b) {
      train_batch(context, static_cast<int>(b), batches[static_cast<std::size_t>(b)]);
    }
    if (!personalised_) exchange_device_part(context);
  }
}

void SplitLearning::train_batch(const RoundContext& context, int batch,
                                const std::vector<std::size_t>& indices) {
  const int m = micro_batches_for(rank_);
  const torch::Tensor images = images_tensor(data_.own, indices);
  const torch::Tensor labels = labels_tensor(data_.own, indices);
  const auto image_pieces = images.tensor_split(m);
  const auto label_pieces = labels.tensor_split(m);

  std::vector<net::RecvHandle> gradients;
  for (int i = 0; i < m; ++i) gradients.push_back(context.transport.post_recv(0, net::MessageKind::gradient));

  // The m forwards back to back; each activation leaves as soon as it exists.
  std::vector<torch::Tensor> outputs;
  std::vector<net::SendHandle> uploads;
  for (int i = 0; i < m; ++i) {
    const torch::Tensor& piece = image_pieces[static_cast<std::size_t>(i)];
    torch::Tensor output;
    {
      auto stage = compute_stage(context, EventKind::forward, batch, i,
                                 static_cast<double>(piece.size(0)) * device_cost_.forward_per_sample);
      output = device_part_->forward(piece);
      // [privacy]: what leaves the device is clipped and noised (the backward flows
      // through the clipping).
      output = privatize_activation(output, privacy_, noise_seed(settings_.seed, rank_, context.round, batch, i));
    }
    net::MessageHeader header = header_for(net::MessageKind::activation, context.round, batch, i, m);
    net::Payload payload = activation_payload(output.detach(), label_pieces[static_cast<std::size_t>(i)], header);
    uploads.push_back(context.transport.send(0, header, std::move(payload)));
    outputs.push_back(output);
  }
  // Each backward as its gradient arrives, then one step for the whole mini-batch.
  for (int i = 0; i < m; ++i) {
    const torch::Tensor gradient =
        tensor_from(receive_or_throw(gradients[static_cast<std::size_t>(i)], context, 0, "activation gradient"));
    const torch::Tensor& output = outputs[static_cast<std::size_t>(i)];
    if (output.requires_grad()) {
      auto stage = compute_stage(context, EventKind::backward, batch, i,
                                 static_cast<double>(output.size(0)) * device_cost_.backward_per_sample);
      output.backward(gradient);
    }
  }
  if (device_optimizer_) {
    auto stage = compute_stage(context, EventKind::step, batch, -1,
                               step_flops(device_cost_.parameters, settings_));
    device_optimizer_->step();
    device_optimizer_->zero_grad();
  }
  for (auto& upload : uploads) wait_or_throw(upload, context, 0, "activation upload");
}

void SplitLearning::exchange_device_part(const RoundContext& context) {
  // Hand the device part to the server (weighted by our share of the data), and, where
  // the server averages (sfl, pipar), take the average back.
  net::SendHandle sent = send_state(context, 0, *device_part_, static_cast<std::int64_t>(batches_->samples()));
  if (traits_.averages) {
    net::RecvHandle average = context.transport.post_recv(0, net::MessageKind::model);
    load_flat_state(*device_part_, tensor_from(receive_or_throw(average, context, 0, "averaged device part")));
    if (settings_.reset_optimizer_state) device_optimizer_ = make_optimizer(*device_part_, settings_);
  }
  wait_or_throw(sent, context, 0, "device part upload");
}

// ---- server side ----

void SplitLearning::serve_parallel_round(const RoundContext& context) {
  serve_devices(context, round_micro_batches());
  if (settings_.aggregates_after(context.round)) aggregate(context);
}

// sfl2: the devices train at once, but the one server part takes them one at a time:
// every micro-batch of the order's first device, then of the next. The others' uploads
// wait, their receives not posted, so a device whose turn comes late idles on its first
// gradient. The device parts are averaged as in sfl.
void SplitLearning::serve_in_device_order(const RoundContext& context) {
  const std::map<int, std::int64_t> micro_batches = round_micro_batches();
  for (const int device : sim::device_serving_order(settings_.seed, context.round, devices_)) {
    serve_devices(context, {{device, micro_batches.at(device)}});
  }
  if (settings_.aggregates_after(context.round)) aggregate(context);
}

// psl: mini-batch b of every device that has one is one batch of the one server part
// (sim::psl_batches, the simulator's rule too). The server waits for all of them, then
// serves them together (serve_concatenated). Nothing is averaged.
void SplitLearning::serve_batches_together(const RoundContext& context) {
  std::vector<std::int64_t> batches;  // per device: psl has one micro-batch per mini-batch
  for (const auto& [device, count] : round_micro_batches()) batches.push_back(count);
  const std::vector<std::vector<int>> together = sim::psl_batches(batches);
  for (std::size_t b = 0; b < together.size(); ++b) {
    std::map<int, std::int64_t> present;
    for (const int device : together[b]) present[device] = 1;
    std::map<int, net::Message> uploads;  // by device: concatenated in device order
    serve_in_arrival_order(context, net::MessageKind::activation, present, "activation upload",
                           [&](int device, net::Message& message) { uploads.emplace(device, std::move(message)); });
    serve_concatenated(context, static_cast<int>(b), uploads);
  }
}

// One forward, loss, backward and step of the one server part on the devices'
// activations concatenated: the loss is the mean over all their samples, so the step is
// the whole batch's. Device d's slice of the input's gradient, times the batch's samples
// over its own, is the gradient of its own mini-batch's mean loss, which its part steps
// on as it would against the server part alone (one device: sl's step). The gradients
// leave before the step, which they do not depend on.
void SplitLearning::serve_concatenated(const RoundContext& context, int batch, std::map<int, net::Message>& uploads) {
  ServerPart& server = server_parts_.front();
  const model::PartCost& cost = server_costs_.front();  // one split for all (validation)
  std::vector<torch::Tensor> activations, labels;
  std::vector<std::int64_t> sizes;
  for (auto& [device, message] : uploads) {
    auto [activation, label] = activation_from(message);
    sizes.push_back(activation.size(0));
    activations.push_back(std::move(activation));
    labels.push_back(std::move(label));
  }
  const torch::Tensor input = torch::cat(activations).requires_grad_(true);
  const std::int64_t samples = input.size(0);
  torch::Tensor loss;
  {
    auto stage = compute_stage(context, EventKind::forward, batch, 0, static_cast<double>(samples) * cost.forward_per_sample);
    loss = batch_loss(server.part->forward(input), torch::cat(labels), samples);
  }
  {
    auto stage = compute_stage(context, EventKind::backward, batch, 0, static_cast<double>(samples) * cost.backward_per_sample);
    loss.backward();
  }
  const std::vector<torch::Tensor> gradients = input.grad().split_with_sizes(sizes);
  std::size_t i = 0;
  for (auto& [device, message] : uploads) {
    const net::MessageHeader& h = message.header;
    net::MessageHeader header = header_for(net::MessageKind::gradient, h.round, h.batch, h.micro_batch, h.micro_batches);
    const torch::Tensor own = gradients[i] * (static_cast<double>(samples) / static_cast<double>(sizes[i]));
    context.transport.send(device, header, tensor_payload(own.contiguous(), header)).detach();
    ++i;
  }
  if (server.optimizer) {
    auto stage = compute_stage(context, EventKind::step, batch, -1, step_flops(cost.parameters, settings_));
    server.optimizer->step();
    server.optimizer->zero_grad();
  }
}

// The device part goes from device to device, turn by turn (sim::sl_turns). Turns of
// a whole round on label-skewed shards (2 classes per device) collapse the model to one
// predicted class; turns of one mini-batch do not (docs/explanation/optimizer-state.md).
void SplitLearning::serve_sequential_round(const RoundContext& context) {
  std::vector<std::int64_t> batches;  // per device: sl has one micro-batch per mini-batch
  for (const auto& [device, count] : round_micro_batches()) batches.push_back(count);
  for (const sim::SlTurn& turn : sim::sl_turns(batches, batches_per_turn_)) {
    const int device = turn.device;
    if (personalised_) {
      // The device trains its own part: all it needs is the word that its turn starts,
      // the smallest message the transport sends (one byte, as adasplit's choices).
      net::MessageHeader header = header_for(net::MessageKind::control, context.round, -1, -1, 0);
      const torch::Tensor go = torch::ones({1}, torch::kUInt8);
      wait_or_throw(context.transport.send(device, header, tensor_payload(go, header)), context, device, "turn start");
      serve_devices(context, {{device, turn.batches}});
      continue;
    }
    // The device part as the previous device left it (the shadow of device 1 holds it).
    wait_or_throw(send_state(context, device, *device_shadows_.front(), 0), context, device, "device part handover");
    serve_devices(context, {{device, turn.batches}});
    net::RecvHandle back = context.transport.post_recv(device, net::MessageKind::model);
    load_flat_state(*device_shadows_.front(),
                    tensor_from(receive_or_throw(back, context, device, "device part return")));
  }
  if (personalised_) return;
  std::map<std::string, torch::Tensor> state;
  for (auto& [name, tensor] : named_state(*device_shadows_.front())) state[name] = tensor;
  for (auto& [name, tensor] : named_state(*server_parts_.front().part)) state[name] = tensor;
  load_named_state(*whole_model_, state);
}

std::map<int, std::int64_t> SplitLearning::round_micro_batches() const {
  std::map<int, std::int64_t> micro_batches;
  for (int device = 1; device <= devices_; ++device) {
    micro_batches[device] =
        batches_per_round(data_.partitions[static_cast<std::size_t>(device - 1)].size(), settings_) *
        micro_batches_for(device);
  }
  return micro_batches;
}

// Serves the devices' micro-batches in arrival order until each has sent its count: on
// the server's main thread, or on train.server_streams worker threads.
void SplitLearning::serve_devices(const RoundContext& context, const std::map<int, std::int64_t>& micro_batches) {
  if (server_streams_ > 1 && micro_batches.size() > 1) return serve_on_streams(context, micro_batches);
  serve_in_arrival_order(context, net::MessageKind::activation, micro_batches, "activation upload",
                         [&](int device, const net::Message& message) {
                           serve_micro_batch(context, device, message);
                         });
}

// k streams: device d's micro-batches go to stream (d - 1) mod k in arrival order, so
// its replica is only touched by that stream's thread and sees its micro-batches in the
// order one stream would serve them: the same weights as one stream (with one LibTorch
// thread per stream; more threads may reorder a reduction). The main thread receives and
// queues; each stream counts its own FLOPs and runs with server_threads / k threads.
void SplitLearning::serve_on_streams(const RoundContext& context,
                                     const std::map<int, std::int64_t>& micro_batches) {
  const int streams = std::min(server_streams_, static_cast<int>(micro_batches.size()));
  std::vector<double> flops(static_cast<std::size_t>(streams), 0.0);
  std::vector<RoundContext> stream_contexts;
  stream_contexts.reserve(flops.size());
  for (double& counter : flops) stream_contexts.push_back(with_flops_counter(context, counter));
  const int threads = std::max(1, server_threads_ / streams);
  ServerStreams workers(streams, [threads] { model::set_intra_op_threads(threads); });
  serve_in_arrival_order(
      context, net::MessageKind::activation, micro_batches, "activation upload",
      [&](int device, net::Message& message) {
        const int stream = (device - 1) % streams;
        workers.submit(stream, [this, &stream_contexts, stream, device, taken = std::move(message)] {
          serve_micro_batch(stream_contexts[static_cast<std::size_t>(stream)], device, taken);
        });
      },
      [&] { workers.check(); });
  workers.finish();
  for (double counter : flops) context.flops += counter;
}

void SplitLearning::serve_micro_batch(const RoundContext& context, int device, const net::Message& message) {
  const net::MessageHeader& h = message.header;
  ServerPart& server = server_for(device);
  const model::PartCost& cost = server_costs_[static_cast<std::size_t>(device - 1)];
  auto [activation, labels] = activation_from(message);
  activation.requires_grad_(true);
  const std::int64_t batch_size = settings_.batch_size;
  const auto samples = static_cast<double>(activation.size(0));
  torch::Tensor loss;
  {
    auto stage = compute_stage(context, EventKind::forward, h.batch, h.micro_batch,
                               samples * cost.forward_per_sample);
    loss = batch_loss(server.part->forward(activation), labels, batch_size);
  }
  {
    auto stage = compute_stage(context, EventKind::backward, h.batch, h.micro_batch,
                               samples * cost.backward_per_sample);
    loss.backward();
  }
  net::MessageHeader header =
      header_for(net::MessageKind::gradient, h.round, h.batch, h.micro_batch, h.micro_batches);
  // Nothing waits for the gradient's departure here: the device waits for its arrival.
  context.transport.send(device, header, tensor_payload(activation.grad(), header)).detach();
  if (h.micro_batch + 1 == h.micro_batches && server.optimizer) {
    auto stage = compute_stage(context, EventKind::step, h.batch, -1, step_flops(cost.parameters, settings_));
    server.optimizer->step();
    server.optimizer->zero_grad();
  }
}

// FedAvg of the whole model: each device's part and its server replica together are one
// copy of the model; layers are averaged by name (weighted by the devices' shares), so
// devices may split at different layers. Personalised: the server replicas alone (each
// device keeps its part), weighted by the devices' shares as the server knows them;
// nothing is received or sent. sfl2's one server part is taken once, as it is: there is
// nothing to average it with.
void SplitLearning::aggregate(const RoundContext& context) {
  std::vector<net::RecvHandle> uploads;
  for (int device = 1; device <= devices_ && !personalised_; ++device) {
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
    auto weight = static_cast<double>(data_.partitions[static_cast<std::size_t>(device - 1)].size());
    if (!personalised_) {
      const net::Message message = receive_or_throw(uploads[static_cast<std::size_t>(device - 1)], context,
                                                    device, "device part upload");
      model::ModelPart& shadow = *device_shadows_[static_cast<std::size_t>(device - 1)];
      load_flat_state(shadow, tensor_from(message));
      weight = static_cast<double>(message.header.samples);
      add_copy(shadow, weight);
    }
    if (!one_server_part()) add_copy(*server_for(device).part, weight);
  }
  if (one_server_part()) add_copy(*server_parts_.front().part, 1.0);
  std::map<std::string, torch::Tensor> average;
  {
    auto stage = compute_stage(context, EventKind::aggregate);
    for (auto& [name, tensors] : copies) average[name] = weighted_average(tensors, weights[name]);
    if (whole_model_) load_named_state(*whole_model_, average);
    for (auto& server : server_parts_) {
      load_named_state(*server.part, average);
      // train.optimizer_state = reset: the replica's state was gathered on its own weights.
      // (sfl2's one server part keeps its weights, and so its state.)
      if (settings_.reset_optimizer_state && !one_server_part()) {
        server.optimizer = make_optimizer(*server.part, settings_);
      }
    }
  }
  if (personalised_) return;
  std::vector<net::SendHandle> replies;
  for (int device = 1; device <= devices_; ++device) {
    model::ModelPart& shadow = *device_shadows_[static_cast<std::size_t>(device - 1)];
    load_named_state(shadow, average);
    replies.push_back(send_state(context, device, shadow, 0));
  }
  for (int device = 1; device <= devices_; ++device) {
    wait_or_throw(replies[static_cast<std::size_t>(device - 1)], context, device, "averaged device part");
  }
}

// A device whose split moves gets new parts on both sides, cut from the averaged whole
// model (every copy of the model is that average after the round), and new optimizers:
// their state (momentum, Adam's moments) restarts, since it belonged to the old parts.
// The server sends the new device part past the link (Shaping::none, as evaluation
// traffic): re-splitting is the testbed's act, not the method's traffic. New
// micro-batch counts need nothing but the count. sfl2's one server part moves once, and
// every device with it.
void SplitLearning::apply_plan(const RoundContext& context, const std::vector<DeviceChoice>& plan) {
  if (!traits_.plannable) throw std::logic_error(traits_.name + " has no plan to change");
  if (personalised_) throw std::logic_error("personalised device parts are not re-split (validation refuses plan.replan)");
  if (plan.size() != static_cast<std::size_t>(devices_)) throw std::invalid_argument("apply_plan: a plan for another device count");
  if (one_server_part() && std::any_of(plan.begin(), plan.end(), [&](const DeviceChoice& c) { return c.split != plan.front().split; })) {
    throw std::invalid_argument("apply_plan: one server part serves every device, so every device needs the same split");
  }
  const std::vector<model::LayerStats> stats = model::layer_stats(settings_.model);
  const std::size_t layers = stats.size();
  std::map<std::string, torch::Tensor> whole;  // the server's averaged model, by name
  if (rank_ == 0) {
    for (auto& [name, tensor] : named_state(*whole_model_)) whole[name] = tensor;
  }
  std::vector<std::pair<int, net::SendHandle>> sent;
  for (int device = 1; device <= devices_; ++device) {
    const DeviceChoice& choice = plan[static_cast<std::size_t>(device - 1)];
    if (choice.split > layers) throw std::invalid_argument("apply_plan: split " + std::to_string(choice.split) + " beyond the model");
    micro_batches_[static_cast<std::size_t>(device - 1)] = traits_.micro_batches ? choice.micro_batches : 1;
    if (choice.split == split_for(device)) continue;
    splits_[static_cast<std::size_t>(device - 1)] = choice.split;
    if (rank_ == 0) {
      ServerPart& server = server_for(device);
      if (!one_server_part() || device == 1) {
        server.part = std::make_unique<model::ModelPart>(settings_.model, choice.split, layers, settings_.seed);
        load_named_state(*server.part, whole);
        server.optimizer = make_optimizer(*server.part, settings_);
      }
      server_costs_[static_cast<std::size_t>(device - 1)] = model::part_cost(stats, choice.split, layers, true);
      auto& shadow = device_shadows_[static_cast<std::size_t>(device - 1)];
      shadow = std::make_unique<model::ModelPart>(settings_.model, 0, choice.split, settings_.seed);
      load_named_state(*shadow, whole);
      sent.emplace_back(device, send_state(context, device, *shadow, 0, net::Transport::Shaping::none));
    } else if (rank_ == device) {
      device_part_ = std::make_unique<model::ModelPart>(settings_.model, 0, choice.split, settings_.seed);
      net::RecvHandle part = context.transport.post_recv(0, net::MessageKind::model);
      load_flat_state(*device_part_, tensor_from(receive_or_throw(part, context, 0, "re-split device part")));
      device_optimizer_ = make_optimizer(*device_part_, settings_);
      device_cost_ = model::part_cost(stats, 0, choice.split, false);
    }
  }
  for (auto& [device, handle] : sent) wait_or_throw(handle, context, device, "re-split device part");
}

std::optional<Evaluation> SplitLearning::evaluate(const RoundContext& context) {
  if (traits_.averages && !settings_.aggregates_after(context.round)) {
    return std::nullopt;  // the server side is one model only after an aggregation
  }
  if (personalised_) {
    // Device d's model: its own part followed by the server part that serves it (the
    // replicas are equal after the average).
    return evaluate_personalised(context, device_part_.get(), data_.train_labels, data_.partitions,
                                 data_.test.num_classes, [&](int device, const torch::Tensor& part) {
                                   model::ModelPart& shadow = *device_shadows_[static_cast<std::size_t>(device - 1)];
                                   load_flat_state(shadow, part);
                                   return score_by_class(shadow, *server_for(device).part, data_.test);
                                 });
  }
  if (rank_ != 0) return std::nullopt;  // the server holds the aggregated model
  auto stage = compute_stage(context, EventKind::evaluate);
  return evaluate_aggregated(*whole_model_, *no_layers_, data_.test, data_.train_labels, data_.partitions,
                             context.evaluation_scope);
}

// One model, or personalised: device d's model as /model/device_<d> (its part as it
// sent it for the last evaluation) followed by /model/server_<d> (the server part that
// serves it: sfl's and pipar's replicas are equal after the last average, sl's is one
// part written for every device), so that each device's model is the pair.
std::vector<std::pair<std::string, std::vector<float>>> SplitLearning::final_state() {
  if (!personalised_) return {{"model", flat_state_values(*whole_model_)}};
  std::vector<std::pair<std::string, std::vector<float>>> state;
  for (int device = 1; device <= devices_; ++device) {
    state.emplace_back("device_" + std::to_string(device),
                       flat_state_values(*device_shadows_[static_cast<std::size_t>(device - 1)]));
  }
  for (int device = 1; device <= devices_; ++device) {
    state.emplace_back("server_" + std::to_string(device), flat_state_values(*server_for(device).part));
  }
  return state;
}

// A device: its part and optimizer. The server: each replica (one for sl) with its
// optimizer, the device-part shadows (for sl, shadow 1 is the device part being handed
// from device to device; personalised, each device's part as last evaluated) and the
// whole model as last aggregated (not personalised). Batches follow
// (seed, device, round). With train.optimizer_state = reset an optimizer renewed after
// the round's average is saved with its empty state, in the same keys.
StateDescription SplitLearning::state() {
  StateDescription state;
  if (rank_ != 0) return state.module("device_part", *device_part_).optimizer("device_optimizer", device_optimizer_.get());
  for (std::size_t i = 0; i < server_parts_.size(); ++i) {
    state.module("server_part_" + std::to_string(i), *server_parts_[i].part)
        .optimizer("server_optimizer_" + std::to_string(i), server_parts_[i].optimizer.get());
  }
  for (std::size_t i = 0; i < device_shadows_.size(); ++i) {
    state.module("device_shadow_" + std::to_string(i), *device_shadows_[i]);
  }
  if (whole_model_) state.module("whole_model", *whole_model_);
  return state;
}

void SplitLearning::save_state(torch::serialize::OutputArchive& archive) { state().save(archive); }

void SplitLearning::load_state(torch::serialize::InputArchive& archive) { state().load(archive); }

}  // namespace cmlbed::train
