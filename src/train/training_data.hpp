#pragma once
// The data a rank trains and evaluates on. Rank 0 reads the data set once (limits
// applied), partitions it and hands each device its own samples; then it keeps the
// test set, the training labels and the partition, never the training images. A
// device keeps its samples only, so that a rank's memory does not grow with the data
// set and the data set is decompressed once per run, not once per rank.
#include <cstdint>
#include <optional>
#include <vector>

#include <mpi.h>

#include "cmlbed/config/settings.hpp"
#include "cmlbed/data/image_set.hpp"
#include "cmlbed/train/evaluation.hpp"

namespace cmlbed::train {

struct TrainingData {
  // Device: its share of the training set in the order of its partition (its sample i
  // is training sample partitions[d-1][i] of the server's view). Empty on the server.
  data::ImageSet own;
  // Server: the test set, the labels of the whole training set (per-device scores need
  // each device's class shares) and every device's sorted sample indices (index d-1
  // for device d). Empty on devices.
  data::ImageSet test;
  std::vector<std::uint8_t> train_labels;
  std::vector<std::vector<std::size_t>> partitions;

  // Device: 0 .. own.size()-1, the positions its batches are drawn from; the same
  // seeded shuffles over its partition's indices would pick the same samples.
  std::vector<std::size_t> own_positions() const;
};

// Collective over `comm` (the run's ranks): every rank calls it with its rank, `devices` = the
// number of device ranks. A data set that cannot be read or split as configured fails
// on every rank alike: std::invalid_argument for a split that cannot work (the driver
// reports it as a configuration error), std::runtime_error otherwise, each with rank
// 0's message.
TrainingData load_training_data(const Settings& settings, int rank, int devices, MPI_Comm comm);

// The server's trivial rate for `scope` (evaluation.hpp); nothing where `data` holds no
// test set (a device's).
std::optional<double> trivial_accuracy(const TrainingData& data, EvaluationScope scope);

}  // namespace cmlbed::train
