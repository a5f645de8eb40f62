#include "adasplit_method.hpp"

#include <algorithm>

#include "cmlbed/base/seed_streams.hpp"
#include "cmlbed/train/state_archive.hpp"
#include "cmlbed/train/tensor_codec.hpp"

namespace cmlbed::train {
namespace {

using trace::EventKind;

net::MessageHeader header_for(net::MessageKind kind, int round, int batch) {
  net::MessageHeader header;
  header.kind = kind;
  header.round = round;
  header.batch = batch;
  header.micro_batch = 0;
  header.micro_batches = 1;
  return header;
}

// Each device's masks from their own seed, so device d's masks do not depend on how
// many devices there are.
std::uint64_t mask_seed(std::uint64_t seed, int device) {
  return stream_seed(seed, "adasplit_masks", {device});
}

}  // namespace

AdaSplit::AdaSplit(const Settings& settings, int rank, int devices, MPI_Comm comm)
    : rank_(rank), devices_(devices), settings_(training_settings(settings)), privacy_(privacy_settings(settings)),
      adasplit_(adasplit_settings(settings)), data_(load_training_data(settings, rank, devices, comm)),
      split_(static_cast<std::size_t>(settings.model.split.all().value())) {
  const std::vector<model::LayerStats> stats = model::layer_stats(settings_.model);
  const std::size_t layers = stats.size();
  if (split_ < 1 || split_ >= layers) {
    throw std::invalid_argument("experiment.method = adasplit needs a device part and a server part: model.split = " +
                                std::to_string(split_) + ", allowed 1.." + std::to_string(layers - 1));
  }
  if (rank == 0) {
    server_part_ = std::make_unique<model::ModelPart>(settings_.model, split_, layers, settings_.seed);
    server_optimizer_ = make_optimizer(*server_part_, settings_);
    for (int device = 1; device <= devices; ++device) {
      masks_.emplace_back(*server_part_, mask_seed(settings_.seed, device));
      mask_optimizers_.push_back(make_optimizer(masks_.back().tensors(), settings_));
    }
    orchestrator_ = std::make_unique<Orchestrator>(adasplit_.policy, devices, adasplit_.selected,
                                                   adasplit_.discount, settings_.seed);
    // No gradient goes back, so the server part's input needs none.
    server_cost_ = model::part_cost(stats, split_, layers, false);
    device_shadow_ = std::make_unique<model::ModelPart>(settings_.model, 0, split_, settings_.seed);
  } else {
    device_part_ = std::make_unique<model::ModelPart>(settings_.model, 0, split_, settings_.seed);
    head_ = std::make_unique<ProjectionHead>(stats[split_ - 1].output_shape, adasplit_.head_channels,
                                             adasplit_.embedding_dim, settings_.seed);
    std::vector<torch::Tensor> parameters = device_part_->parameters();
    for (const auto& p : head_->parameters()) parameters.push_back(p);
    device_optimizer_ = make_optimizer(parameters, settings_);
    device_cost_ = model::part_cost(stats, 0, split_, false);
    head_parameters_ = head_->parameter_count();
    batches_ = std::make_unique<LocalBatches>(data_.own_positions(),
                                              settings_.seed, rank);
  }
}

std::int64_t AdaSplit::batches_of(int device) const {
  return batches_per_round(data_.partitions[static_cast<std::size_t>(device - 1)].size(), settings_);
}

void AdaSplit::run_round(const RoundContext& context) {
  if (rank_ != 0) return train_device_round(context);
  if (global_phase(context.round)) serve_round(context);
}

// ---- device side ----

void AdaSplit::train_device_round(const RoundContext& context) {
  const bool global = global_phase(context.round);
  const auto batches = batches_->round(context.round, settings_);
  std::vector<net::RecvHandle> choices;  // the orchestrator's word on each batch
  if (global) {
    for (std::size_t b = 0; b < batches.size(); ++b) {
      choices.push_back(context.transport.post_recv(0, net::MessageKind::control));
    }
  }
  std::vector<net::SendHandle> uploads;
  const double head_forward = head_->forward_flops_per_sample();
  for (std::size_t b = 0; b < batches.size(); ++b) {
    const int batch = static_cast<int>(b);
    const torch::Tensor images = images_tensor(data_.own, batches[b]);
    const torch::Tensor labels = labels_tensor(data_.own, batches[b]);
    const std::int64_t n = images.size(0);
    torch::Tensor activation, loss;
    {
      auto stage = compute_stage(context, EventKind::forward, batch, 0,
                                 adasplit_device_forward_flops(device_cost_, head_forward, n, adasplit_.embedding_dim));
      activation = device_part_->forward(images);
      loss = supervised_nt_xent(head_->forward(activation), labels, adasplit_.temperature);
    }
    {
      auto stage = compute_stage(context, EventKind::backward, batch, 0,
                                 adasplit_device_backward_flops(device_cost_, head_forward, n, adasplit_.embedding_dim));
      loss.backward();
    }
    {
      auto stage = compute_stage(context, EventKind::step, batch, -1,
                                 step_flops(device_cost_.parameters + head_parameters_, settings_));
      device_optimizer_->step();
      device_optimizer_->zero_grad();
    }
    if (!global) continue;
    const torch::Tensor choice = tensor_from(receive_or_throw(choices[b], context, 0, "orchestrator's choice"));
    if (choice.item<std::uint8_t>() == 0) continue;
    // The activation of this batch's forward, before the step changed the weights.
    net::MessageHeader header = header_for(net::MessageKind::activation, context.round, batch);
    // [privacy]: clipped and noised on its way out (nothing comes back to flow through).
    const torch::Tensor released =
        privatize_activation(activation.detach(), privacy_, noise_seed(settings_.seed, rank_, context.round, batch, 0));
    uploads.push_back(context.transport.send(0, header, activation_payload(released, labels, header)));
  }
  for (auto& upload : uploads) wait_or_throw(upload, context, 0, "activation upload");
}

// ---- server side ----

void AdaSplit::serve_round(const RoundContext& context) {
  std::int64_t iterations = 0;
  for (int device = 1; device <= devices_; ++device) iterations = std::max(iterations, batches_of(device));
  for (std::int64_t b = 0; b < iterations; ++b) {
    const int batch = static_cast<int>(b);
    std::vector<int> eligible;
    for (int device = 1; device <= devices_; ++device) {
      if (b < batches_of(device)) eligible.push_back(device);
    }
    const std::vector<int> chosen = orchestrator_->select(eligible);
    std::map<int, net::RecvHandle> uploads;
    for (int device : eligible) {
      const bool picked = std::binary_search(chosen.begin(), chosen.end(), device);
      if (picked) uploads[device] = context.transport.post_recv(device, net::MessageKind::activation);
      net::MessageHeader header = header_for(net::MessageKind::control, context.round, batch);
      const torch::Tensor flag = torch::full({1}, picked ? 1 : 0, torch::kUInt8);
      // The device waits for its arrival; nothing here waits for its departure.
      context.transport.send(device, header, tensor_payload(flag, header)).detach();
    }
    // In device order, not arrival order: every picked batch steps the one shared W, so
    // the order of the steps is part of the result, and a run must repeat exactly.
    std::map<int, double> losses;
    for (auto& [device, upload] : uploads) {
      losses[device] = serve_batch(context, device, receive_or_throw(upload, context, device, "activation upload"));
    }
    orchestrator_->record(losses);
  }
}

// One step of the shared server part through device's masks; returns the batch's mean
// cross-entropy (the orchestrator's measure of what the device still has to teach).
double AdaSplit::serve_batch(const RoundContext& context, int device, const net::Message& message) {
  const net::MessageHeader& h = message.header;
  model::WeightMasks& masks = masks_[static_cast<std::size_t>(device - 1)];
  auto [activation, labels] = activation_from(message);
  const std::int64_t n = activation.size(0);
  torch::Tensor cross_entropy, loss;
  {
    auto stage = compute_stage(context, EventKind::forward, h.batch, 0,
                               adasplit_server_forward_flops(server_cost_, masks.entries(), n));
    const auto applied = masks.apply(*server_part_);
    cross_entropy = torch::nn::functional::cross_entropy(server_part_->forward(activation), labels);
    loss = cross_entropy + adasplit_.l1 * masks.l1();
  }
  {
    auto stage = compute_stage(context, EventKind::backward, h.batch, 0,
                               adasplit_server_backward_flops(server_cost_, masks.entries(), n));
    loss.backward();
  }
  {
    auto stage = compute_stage(context, EventKind::step, h.batch, -1,
                               step_flops(server_cost_.parameters + masks.entries(), settings_));
    server_optimizer_->step();
    server_optimizer_->zero_grad();
    auto& mask_optimizer = *mask_optimizers_[static_cast<std::size_t>(device - 1)];
    mask_optimizer.step();
    mask_optimizer.zero_grad();
  }
  return cross_entropy.item<double>();
}

// ---- evaluation ----

// Device d's model is its part followed by the server part under its masks
// (evaluate_personalised: the parts travel unshaped, outside the rounds).
std::optional<Evaluation> AdaSplit::evaluate(const RoundContext& context) {
  return evaluate_personalised(context, device_part_.get(), data_.train_labels, data_.partitions,
                               data_.test.num_classes, [&](int device, const torch::Tensor& part) {
                                 load_flat_state(*device_shadow_, part);
                                 torch::NoGradGuard no_grad;
                                 const auto applied = masks_[static_cast<std::size_t>(device - 1)].apply(*server_part_);
                                 return score_by_class(*device_shadow_, *server_part_, data_.test);
                               });
}

std::vector<std::pair<std::string, std::vector<float>>> AdaSplit::final_state() {
  std::vector<std::pair<std::string, std::vector<float>>> state = {{"server", flat_state_values(*server_part_)}};
  for (int device = 1; device <= devices_; ++device) {
    std::vector<float> values;
    for (const auto& mask : masks_[static_cast<std::size_t>(device - 1)].tensors()) {
      const torch::Tensor flat = mask.detach().flatten().contiguous();
      values.insert(values.end(), flat.data_ptr<float>(), flat.data_ptr<float>() + flat.numel());
    }
    state.emplace_back("masks_" + std::to_string(device), std::move(values));
  }
  return state;
}

std::map<int, double> AdaSplit::mask_sparsity() const {
  std::map<int, double> sparsity;
  for (std::size_t d = 0; d < masks_.size(); ++d) sparsity[static_cast<int>(d) + 1] = masks_[d].sparsity();
  return sparsity;
}

// ---- checkpoints ----

StateDescription AdaSplit::state() {
  StateDescription state;
  if (rank_ != 0) {
    return state.module("device_part", *device_part_).module("head", *head_).optimizer("device_optimizer",
                                                                                       device_optimizer_.get());
  }
  state.module("server_part", *server_part_).optimizer("server_optimizer", server_optimizer_.get());
  for (std::size_t d = 0; d < masks_.size(); ++d) {
    const std::string key = "masks_" + std::to_string(d + 1);
    const auto& tensors = masks_[d].tensors();
    for (std::size_t i = 0; i < tensors.size(); ++i) state.tensor(key + "_" + std::to_string(i), tensors[i]);
    state.optimizer(key + "_optimizer", mask_optimizers_[d].get());
  }
  return state.text(
      "orchestrator", [this] { return orchestrator_->save(); },
      [this](const std::string& saved) { orchestrator_->restore(saved); });
}

void AdaSplit::save_state(torch::serialize::OutputArchive& archive) { state().save(archive); }

void AdaSplit::load_state(torch::serialize::InputArchive& archive) { state().load(archive); }

}  // namespace cmlbed::train
