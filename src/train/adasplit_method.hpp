#pragma once
// AdaSplit (Chopra et al., arXiv 2112.01637), as docs/explanation/adasplit.md describes it:
//  - local phase (the first floor(kappa x rounds) rounds): every device trains its part
//    plus a projection head on a supervised contrastive loss; nothing is sent;
//  - global phase: in each iteration (mini-batch index) the server's orchestrator picks
//    eta devices and tells every device with a batch at that index whether it was
//    picked (a one-byte control message); picked devices upload their activations and
//    labels; the server trains one shared server part W through a per-device mask M_d
//    (W * sigmoid(M_d)) on cross-entropy + l1 x sum(sigmoid(M_d)), one step per picked
//    batch in device order (so a run repeats exactly); no gradient goes back: every
//    device keeps training on its own loss;
//  - evaluation: device d is its part followed by the server part under M_d.
// A device computes its iteration while the server serves the previous one: the
// choice for iteration b goes out once the server has finished iteration b - 1, and a
// device waits for it only after its own forward, backward and step of batch b.
#include <memory>

#include "cmlbed/model/part_cost.hpp"
#include "cmlbed/model/weight_masks.hpp"
#include "cmlbed/train/adasplit_costs.hpp"
#include "cmlbed/train/contrastive_objective.hpp"
#include "cmlbed/train/local_training.hpp"
#include "cmlbed/train/privacy.hpp"
#include "cmlbed/train/orchestrator.hpp"
#include "training_data.hpp"

namespace cmlbed::train {

class StateDescription;

class AdaSplit : public Method {
 public:
  AdaSplit(const Settings& settings, int rank, int devices, MPI_Comm comm);
  void run_round(const RoundContext& context) override;
  std::optional<Evaluation> evaluate(const RoundContext& context) override;
  std::optional<double> trivial_accuracy(EvaluationScope scope) const override {
    return train::trivial_accuracy(data_, scope);
  }
  std::vector<std::pair<std::string, std::vector<float>>> final_state() override;
  std::map<int, double> mask_sparsity() const override;
  void save_state(torch::serialize::OutputArchive& archive) override;
  void load_state(torch::serialize::InputArchive& archive) override;
  // What save_state writes and load_state reads, described once.
  StateDescription state();

 private:
  bool global_phase(int round) const { return round >= adasplit_.local_rounds; }
  std::int64_t batches_of(int device) const;

  // Device side.
  void train_device_round(const RoundContext& context);
  // Server side.
  void serve_round(const RoundContext& context);
  double serve_batch(const RoundContext& context, int device, const net::Message& message);

  int rank_;
  int devices_;
  TrainingSettings settings_;
  PrivacySettings privacy_;
  AdaSplitSettings adasplit_;
  TrainingData data_;
  std::size_t split_ = 0;

  // Device: its part, head, one optimizer over both, batches, FLOPs per sample.
  std::unique_ptr<model::ModelPart> device_part_;
  std::unique_ptr<ProjectionHead> head_;
  std::unique_ptr<torch::optim::Optimizer> device_optimizer_;
  std::unique_ptr<LocalBatches> batches_;
  model::PartCost device_cost_;
  std::int64_t head_parameters_ = 0;

  // Server: the shared part, its optimizer, each device's masks and their optimizer,
  // the orchestrator; a device part to load each device's weights into for evaluation.
  std::unique_ptr<model::ModelPart> server_part_;
  std::unique_ptr<torch::optim::Optimizer> server_optimizer_;
  std::vector<model::WeightMasks> masks_;  // index d - 1
  std::vector<std::unique_ptr<torch::optim::Optimizer>> mask_optimizers_;
  std::unique_ptr<Orchestrator> orchestrator_;
  model::PartCost server_cost_;
  std::unique_ptr<model::ModelPart> device_shadow_;
};

}  // namespace cmlbed::train
