#include "training_data.hpp"

#include "cmlbed/data/partition.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/trace/startup_clock.hpp"

namespace cmlbed::train {

TrainingData load_training_data(const Config& config, int devices) {
  TrainingData data;
  data.dataset = load_dataset(config);
  data.partitions = data::partition_indices(data.dataset.train.labels, data.dataset.train.num_classes,
                                            partition_spec(config, devices));
  trace::startup_clock().end(trace::StartupPhase::data);
  return data;
}

}  // namespace cmlbed::train
