#pragma once
// The data every training method starts from, identical on every rank: the dataset
// (limits applied) and its partition across devices (index d-1 for device d).
#include "cmlbed/config/config.hpp"
#include "cmlbed/data/dataset_loader.hpp"

namespace cmlbed::train {

struct TrainingData {
  data::Dataset dataset;
  std::vector<std::vector<std::size_t>> partitions;
};

TrainingData load_training_data(const Config& config, int devices);

}  // namespace cmlbed::train
