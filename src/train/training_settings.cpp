#include "cmlbed/train/training_settings.hpp"

#include "cmlbed/setup/derived.hpp"

namespace cmlbed::train {

TrainingSettings training_settings(const Settings& settings) {
  TrainingSettings s;
  s.model = model_options(settings);
  s.seed = static_cast<std::uint64_t>(settings.experiment.seed);
  s.batch_size = settings.train.batch_size;
  s.local_epochs = settings.train.local_epochs;
  s.local_iterations = settings.train.local_iterations;
  s.rounds = static_cast<int>(settings.experiment.rounds);
  s.aggregate_every = static_cast<int>(settings.train.aggregate_every);
  s.optimizer = settings.train.optimizer;
  s.lr = settings.train.lr;
  s.momentum = settings.train.momentum;
  s.weight_decay = settings.train.weight_decay;
  s.reset_optimizer_state = settings.train.optimizer_state == "reset";
  return s;
}

}  // namespace cmlbed::train
