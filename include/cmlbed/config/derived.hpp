#pragma once
// Settings other modules need, derived from the resolved configuration in one place.
#include "cmlbed/config/config.hpp"
#include "cmlbed/data/dataset_loader.hpp"
#include "cmlbed/data/partition.hpp"
#include "cmlbed/model/zoo.hpp"

namespace cmlbed {

data::DatasetSpec dataset_spec(const Config& config);

// Input shape and class count come from the dataset, the network from [model].
model::ModelOptions model_options(const Config& config);

// The dataset with data.train_limit / data.test_limit applied.
data::Dataset load_dataset(const Config& config);

data::PartitionSpec partition_spec(const Config& config, int devices);

}  // namespace cmlbed
