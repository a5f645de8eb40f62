#include "cmlbed/train/training_settings.hpp"

#include "cmlbed/setup/derived.hpp"

namespace cmlbed::train {

TrainingSettings training_settings(const Config& config) {
  TrainingSettings s;
  s.model = model_options(config);
  s.seed = static_cast<std::uint64_t>(config.integer("experiment.seed"));
  s.batch_size = config.integer("train.batch_size");
  s.local_epochs = config.integer("train.local_epochs");
  s.local_iterations = config.integer("train.local_iterations");
  s.rounds = static_cast<int>(config.integer("experiment.rounds"));
  s.aggregate_every = static_cast<int>(config.integer("train.aggregate_every"));
  s.optimizer = config.text("train.optimizer");
  s.lr = config.real("train.lr");
  s.momentum = config.real("train.momentum");
  s.weight_decay = config.real("train.weight_decay");
  s.reset_optimizer_state = config.text("train.optimizer_state") == "reset";
  return s;
}

}  // namespace cmlbed::train
