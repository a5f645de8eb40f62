#pragma once
// fl: FedAvg. Each device trains the whole model on its share for the round's local
// batches and uploads it; the server averages the models weighted by the devices'
// sample counts, evaluates, and sends the average back. The server computes nothing
// else: its idle time is the baseline the split methods are compared with.
#include "cmlbed/model/part_cost.hpp"
#include "cmlbed/train/local_training.hpp"
#include "cmlbed/train/privacy.hpp"
#include "training_data.hpp"

namespace cmlbed::train {

class StateDescription;

class FederatedAveraging : public Method {
 public:
  FederatedAveraging(const Settings& settings, int rank, int devices, MPI_Comm comm);
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
  void train_device_round(const RoundContext& context);
  void aggregate(const RoundContext& context);

  int rank_;
  int devices_;
  TrainingSettings settings_;
  PrivacySettings privacy_;
  TrainingData data_;
  std::unique_ptr<model::ModelPart> model_;      // device: its copy; server: the average
  std::unique_ptr<model::ModelPart> no_layers_;  // server: identity, to evaluate model_
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<LocalBatches> batches_;
  model::PartCost cost_;  // FLOPs of the whole model
  // Device, with [privacy]: the model at the last aggregation, against which its update
  // is clipped (DP-FedAvg).
  torch::Tensor round_start_;
};

}  // namespace cmlbed::train
