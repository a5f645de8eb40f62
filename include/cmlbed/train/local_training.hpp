#pragma once
// What every training method shares: the training settings, the optimizer, a device's
// batch schedule, tensors from images, test-set evaluation and weighted averaging.
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <optional>

#include "cmlbed/config/config.hpp"
#include "cmlbed/data/dataset_loader.hpp"
#include "cmlbed/data/image_set.hpp"
#include "cmlbed/model/split_model.hpp"
#include "cmlbed/train/evaluation.hpp"
#include "cmlbed/train/method.hpp"
#include "cmlbed/train/training_settings.hpp"

namespace cmlbed::train {


// nullptr for a module without parameters (an empty model part).
std::unique_ptr<torch::optim::Optimizer> make_optimizer(torch::nn::Module& module,
                                                        const TrainingSettings& settings);
std::unique_ptr<torch::optim::Optimizer> make_optimizer(std::vector<torch::Tensor> parameters,
                                                        const TrainingSettings& settings);

// A device's share of the training set and the order it trains in: every round draws
// full mini-batches from seeded reshuffles of the share (a fresh permutation per epoch),
// so the schedule depends only on (seed, device, round).
class LocalBatches {
 public:
  LocalBatches(std::vector<std::size_t> indices, std::uint64_t seed, int device);
  std::vector<std::vector<std::size_t>> round(int round, const TrainingSettings& settings) const;
  std::size_t samples() const { return indices_.size(); }

 private:
  std::vector<std::size_t> indices_;
  std::uint64_t seed_;
  int device_;
};

// Number of mini-batches per round for a share of `samples` (what the server expects).
std::int64_t batches_per_round(std::size_t samples, const TrainingSettings& settings);

torch::Tensor images_tensor(const data::ImageSet& set, const std::vector<std::size_t>& indices);
torch::Tensor labels_tensor(const data::ImageSet& set, const std::vector<std::size_t>& indices);

// Mean cross-entropy scaled so that micro-batch gradients add up to the batch mean's.
torch::Tensor batch_loss(const torch::Tensor& logits, const torch::Tensor& labels,
                         std::int64_t batch_size);

// One pass of device part then server part over the test set (eval mode, batches of
// 500): per-class samples, correct predictions and summed loss.
ClassScores score_by_class(model::ModelPart& device_part, model::ModelPart& server_part,
                           const data::ImageSet& test);

// The evaluation of an aggregated model (fl, sfl, pipar: every device would deploy the
// same one), by the rank that holds it: the global score, or in per-device scope each
// device's score on its classes (evaluation.hpp).
// `train_labels` and `partitions` (each device's indices into them) give the devices'
// class shares.
Evaluation evaluate_aggregated(model::ModelPart& device_part, model::ModelPart& server_part,
                               const data::ImageSet& test, const std::vector<std::uint8_t>& train_labels,
                               const std::vector<std::vector<std::size_t>>& partitions,
                               EvaluationScope scope);

// The evaluation of personalised models (adasplit; sl, sfl and pipar with
// train.personalised), on every rank in the evaluation phase. A device hands its part
// (`device_part`) to the server over an unshaped channel (not counted in any round) and
// scores nothing. The server takes every device's part and scores device d's model with
// `score(d, flat part of d)`: on the test samples of d's classes (per-device scope), or on
// the whole test set, the global score then being the mean over devices.
using PersonalScore = std::function<ClassScores(int device, const torch::Tensor& device_part)>;
std::optional<Evaluation> evaluate_personalised(const RoundContext& context, torch::nn::Module* device_part,
                                                const std::vector<std::uint8_t>& train_labels,
                                                const std::vector<std::vector<std::size_t>>& partitions,
                                                std::int64_t classes, const PersonalScore& score);

// FLOPs of one optimizer step over `parameters` weights: SGD 2 per weight (the update),
// + 2 with momentum (the buffer), + 2 with weight decay; Adam 13 per weight (two moment
// updates 3 + 4, denominator 3, update 3), + 2 with weight decay.
double step_flops(std::int64_t parameters, const TrainingSettings& settings);

// sum_i weights_i * states_i / sum_i weights_i.
torch::Tensor weighted_average(const std::vector<torch::Tensor>& states,
                               const std::vector<double>& weights);

}  // namespace cmlbed::train
