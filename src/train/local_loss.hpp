#pragma once
// localloss: split learning with a local loss (CSE-FSL, Mu & Shen, arXiv 2302.05599; the
// family of FSL-SAGE and Ampere), as docs/explanation/methods.md describes it:
//  - each device trains its part plus an auxiliary head (AdaSplit's projection head, its
//    output one logit per class) on cross-entropy, stepping on every mini-batch; no
//    gradient ever comes back;
//  - every localloss.upload_every mini-batches it uploads the activation of that batch's
//    forward and its labels; the server trains its one part on each upload (forward,
//    cross-entropy, backward, step), the uploads of mini-batch index b in device order,
//    so that a run repeats exactly;
//  - every train.aggregate_every rounds the devices upload their part and head, the
//    server averages them weighted by samples (FedAvg) and sends the average back;
//  - the model scored is the averaged device part followed by the server part (the
//    auxiliary head trains the device part only).
#include <memory>

#include "cmlbed/model/part_cost.hpp"
#include "cmlbed/train/contrastive_objective.hpp"
#include "cmlbed/train/local_training.hpp"
#include "cmlbed/train/privacy.hpp"
#include "training_data.hpp"

namespace cmlbed::train {

class StateDescription;

class LocalLoss : public Method {
 public:
  LocalLoss(const Settings& settings, int rank, int devices, MPI_Comm comm);
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
  // The device's part and head as one flat tensor (what is averaged), and back.
  torch::Tensor flat_device_side(model::ModelPart& part, ProjectionHead& head) const;
  void load_device_side(model::ModelPart& part, ProjectionHead& head, const torch::Tensor& flat) const;
  bool uploads_batch(std::size_t batch) const { return batch % static_cast<std::size_t>(upload_every_) == 0; }
  std::int64_t batches_of(int device) const;

  void train_device_round(const RoundContext& context);
  void serve_round(const RoundContext& context);
  void serve_upload(const RoundContext& context, const net::Message& message);
  void aggregate(const RoundContext& context);

  int rank_;
  int devices_;
  TrainingSettings settings_;
  PrivacySettings privacy_;
  TrainingData data_;
  std::size_t split_;
  std::int64_t upload_every_;
  model::PartCost device_cost_, server_cost_;
  double head_forward_flops_ = 0;  // per sample
  std::int64_t head_parameters_ = 0;

  // Device: its part and head, trained together on the head's loss.
  std::unique_ptr<model::ModelPart> device_part_;
  std::unique_ptr<ProjectionHead> head_;
  std::unique_ptr<torch::optim::Optimizer> device_optimizer_;
  std::unique_ptr<LocalBatches> batches_;

  // Server: its one part, and the devices' part and head as last averaged.
  std::unique_ptr<model::ModelPart> server_part_;
  std::unique_ptr<torch::optim::Optimizer> server_optimizer_;  // none for a part without weights
  std::unique_ptr<model::ModelPart> device_average_;
  std::unique_ptr<ProjectionHead> head_average_;
};

}  // namespace cmlbed::train
