#pragma once
// ushaped: U-shaped split learning, the labels never leaving the device (Vepakomma et
// al., arXiv 1812.00564; SLPerf, arXiv 2304.01502, benchmarks it), run as SplitFed runs
// the plain cut (every device at once, a server middle per device, FedAvg), as
// docs/explanation/methods.md describes it. The model is cut twice: a device runs its
// head, layers [model.split, of that device), and the tail, layers [ushaped.tail, L) with
// the loss; the server runs the middle [model.split, ushaped.tail) on a replica per
// device. Per mini-batch:
//  - the device runs its head forward and uploads the activation (no labels);
//  - the server runs the device's middle forward and sends the output down;
//  - the device runs the tail forward and the loss, backward through the tail, and
//    uploads the gradient of the middle's output;
//  - the server runs the middle backward, sends the gradient of the head's output down,
//    and steps the middle;
//  - the device runs its head backward and steps head and tail.
// The server serves mini-batch index b of every device in two passes, in device order:
// every middle forward, then every middle backward. Every train.aggregate_every rounds the
// devices upload head and tail, and the server averages every layer over the devices
// (middles included) by name, weighted by samples, as sfl does, and sends each device its
// head and the tail back. The model scored is that average.
#include <memory>

#include "cmlbed/model/part_cost.hpp"
#include "cmlbed/train/local_training.hpp"
#include "cmlbed/train/privacy.hpp"
#include "training_data.hpp"

namespace cmlbed::train {

class StateDescription;

class UShaped : public Method {
 public:
  UShaped(const Settings& settings, int rank, int devices, MPI_Comm comm);
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

 private:
  struct Middle {
    std::unique_ptr<model::ModelPart> part;
    std::unique_ptr<torch::optim::Optimizer> optimizer;  // none for a middle without weights
    model::PartCost cost;
  };
  // A middle forward awaiting its gradient.
  struct InFlight {
    int device = 0;
    torch::Tensor input, output;
    std::int64_t samples = 0;
  };

  std::int64_t batches_of(int device) const;
  void train_device_round(const RoundContext& context);
  void train_batch(const RoundContext& context, int batch, const std::vector<std::size_t>& indices);
  void serve_round(const RoundContext& context);
  InFlight serve_forward(const RoundContext& context, int device, const net::Message& upload);
  void serve_backward(const RoundContext& context, int batch, InFlight& job, const net::Message& gradient);
  void aggregate(const RoundContext& context);

  int rank_;
  int devices_;
  TrainingSettings settings_;
  PrivacySettings privacy_;
  TrainingData data_;
  std::vector<std::size_t> splits_;  // per device: where its head ends
  std::size_t tail_ = 0;             // where the tail starts (ushaped.tail)

  // Device: its head and the tail, one optimizer for both.
  std::unique_ptr<model::ModelPart> head_, tail_part_;
  std::unique_ptr<torch::optim::Optimizer> device_optimizer_;
  std::unique_ptr<LocalBatches> batches_;
  model::PartCost head_cost_, tail_cost_;

  // Server: a middle per device; each device's head and the tail as last received (to
  // name their weights); the whole model as last averaged.
  std::vector<Middle> middles_;
  std::vector<std::unique_ptr<model::ModelPart>> head_shadows_;
  std::unique_ptr<model::ModelPart> tail_shadow_;
  std::unique_ptr<model::ModelPart> whole_model_, no_layers_;
};

}  // namespace cmlbed::train
