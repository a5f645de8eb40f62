#pragma once
// Split learning in three schedules over one implementation:
//  - sfl   (SplitFed V1): all devices in parallel, one server replica per device, one
//          micro-batch per mini-batch; device parts and replicas averaged every round;
//  - pipar (PiPar): sfl with each mini-batch cut into m micro-batches: the device runs
//          the m forwards back to back and uploads each activation as soon as it
//          exists, the server serves micro-batches of all devices in arrival order and
//          sends each gradient back at once, the device runs each backward as its
//          gradient arrives; gradients accumulate, one optimizer step per mini-batch on
//          each side, so the mathematics are sfl's and only the timing changes;
//  - sl    (vanilla split learning): one device at a time with a single server part;
//          the device part goes from device to device through the server, after each
//          device's sl.batches_per_turn mini-batches (sim::sl_turns);
//  - sfl2  (SplitFed V2, Thapa et al. 2022): all devices train at once, but one server
//          part serves them, one device's whole round at a time, the devices in a seeded
//          random order each round (sim::device_serving_order); the device parts are
//          averaged as in sfl, the server part is the one part and is not averaged;
//  - psl   (parallel split learning, Jeon & Kim 2020; EPSL's phi = 0, Lin et al. 2024):
//          all devices train at once, one server part takes mini-batch b of every device
//          as one batch (their activations concatenated): one forward, one loss, one
//          backward, one step; each device gets the gradient of its own mini-batch's
//          mean loss; the device parts are never averaged (each device keeps its own).
// train.personalised (psl: always): each device keeps its own device part (sfl, pipar: not averaged,
// nothing sent for it; sl: not handed over, a one-byte control word starts a device's
// turn); the server side stays shared (replicas averaged; sl's one part). Device d is
// scored with its own part followed by the server part (evaluate_personalised).
#include <map>

#include "cmlbed/model/part_cost.hpp"
#include "cmlbed/config/methods.hpp"
#include "cmlbed/train/local_training.hpp"
#include "cmlbed/train/privacy.hpp"
#include "training_data.hpp"

namespace cmlbed::train {

class StateDescription;

class SplitLearning : public Method {
 public:
  // sl, sfl, sfl2, pipar and psl: what the method's row of the method table says (turns,
  // replicas, device order, micro-batches, averaging) decides the schedule.
  SplitLearning(const Settings& settings, int rank, int devices, MPI_Comm comm);
  void run_round(const RoundContext& context) override;
  std::optional<Evaluation> evaluate(const RoundContext& context) override;
  std::optional<double> trivial_accuracy(EvaluationScope scope) const override {
    return train::trivial_accuracy(data_, scope);
  }
  std::vector<std::pair<std::string, std::vector<float>>> final_state() override;
  void save_state(torch::serialize::OutputArchive& archive) override;
  void load_state(torch::serialize::InputArchive& archive) override;
  // What save_state writes and load_state reads, described once.
  StateDescription state();
  void apply_plan(const RoundContext& context, const std::vector<DeviceChoice>& plan) override;

 private:
  struct ServerPart {
    std::unique_ptr<model::ModelPart> part;
    std::unique_ptr<torch::optim::Optimizer> optimizer;
  };

  int micro_batches_for(int device) const;
  // The server part that serves device d: its replica (sfl, pipar) or the one part (sl, sfl2, psl).
  ServerPart& server_for(int device);
  bool one_server_part() const { return !traits_.server_replicas; }
  std::size_t split_for(int device) const;

  // Device side.
  void train_device_round(const RoundContext& context);
  void train_batch(const RoundContext& context, int batch, const std::vector<std::size_t>& indices);
  void exchange_device_part(const RoundContext& context);
  void take_turns(const RoundContext& context, const std::vector<std::vector<std::size_t>>& batches);

  // Server side.
  void serve_parallel_round(const RoundContext& context);
  void serve_sequential_round(const RoundContext& context);
  void serve_in_device_order(const RoundContext& context);
  void serve_batches_together(const RoundContext& context);
  void serve_concatenated(const RoundContext& context, int batch, std::map<int, net::Message>& uploads);
  // Every device's micro-batches in a round, by device.
  std::map<int, std::int64_t> round_micro_batches() const;
  void serve_devices(const RoundContext& context, const std::map<int, std::int64_t>& micro_batches);
  void serve_on_streams(const RoundContext& context, const std::map<int, std::int64_t>& micro_batches);
  void serve_micro_batch(const RoundContext& context, int device, const net::Message& message);
  void aggregate(const RoundContext& context);

  const MethodTraits& traits_;
  int rank_;
  int devices_;
  TrainingSettings settings_;
  PrivacySettings privacy_;
  TrainingData data_;
  std::vector<int> micro_batches_;  // per device (index d-1)
  std::vector<std::size_t> splits_;  // per device
  int server_streams_ = 1;  // train.server_streams (sfl, pipar); sl has one replica, one stream
  std::int64_t batches_per_turn_ = 0;  // sl.batches_per_turn (0: a device's whole round)
  bool personalised_ = false;          // train.personalised, or a method that always is
  int server_threads_ = 1;  // train.server_threads, shared out among the streams
  model::PartCost device_cost_;      // device: FLOPs of its part
  std::vector<model::PartCost> server_costs_;  // server: of each device's server part

  // Device: its part, optimizer and batches.
  std::unique_ptr<model::ModelPart> device_part_;
  std::unique_ptr<torch::optim::Optimizer> device_optimizer_;
  std::unique_ptr<LocalBatches> batches_;

  // Server: one server part per device (sfl, pipar) or one shared (sl, sfl2: index 0); a
  // shadow of each device's part (to name the weights it sends; personalised: each
  // device's part as it last sent it for evaluation); the whole model as last aggregated,
  // for evaluation and the final weights (none when personalised: there is no one model).
  std::vector<ServerPart> server_parts_;
  std::vector<std::unique_ptr<model::ModelPart>> device_shadows_;
  std::unique_ptr<model::ModelPart> whole_model_;
  std::unique_ptr<model::ModelPart> no_layers_;  // identity, to evaluate the whole model
};

}  // namespace cmlbed::train
