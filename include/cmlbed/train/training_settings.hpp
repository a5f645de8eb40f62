#pragma once
// The training settings every method shares, read from [train], [model] and
// [experiment] (training_settings.cpp). Without LibTorch, so that
// the planner's spec and the programs can hold them.
#include <cstdint>
#include <string>

#include "cmlbed/config/settings.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/sim/round_rules.hpp"

namespace cmlbed::train {

struct TrainingSettings {
  model::ModelOptions model;
  std::uint64_t seed = 1;
  std::int64_t batch_size = 32;
  std::int64_t local_epochs = 1;
  std::int64_t local_iterations = 0;  // > 0 overrides local_epochs
  int rounds = 1;
  int aggregate_every = 1;  // FedAvg every k rounds and after the last

  // Whether the round (0-based) ends with an aggregation.
  bool aggregates_after(int round) const { return sim::averages_after(round, aggregate_every, rounds); }
  std::string optimizer = "sgd";
  double lr = 0.01, momentum = 0.9, weight_decay = 0;
  // train.optimizer_state = reset: a fresh optimizer wherever a model's weights are
  // replaced from outside (an average, a handed-over device part); keep: its state
  // carries on.
  bool reset_optimizer_state = true;
};
TrainingSettings training_settings(const Settings& settings);

}  // namespace cmlbed::train
