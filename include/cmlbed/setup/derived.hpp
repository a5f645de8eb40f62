#pragma once
// The parts of a run, assembled from the resolved configuration in one place: the
// dataset, the model's options, the partition, each device's links, the output path.
// It sits above config and the areas whose parts it builds (data, model, net), so
// that none of them needs to know the configuration (docs/explanation/architecture.md).
#include <vector>

#include "cmlbed/config/settings.hpp"
#include "cmlbed/data/dataset_loader.hpp"
#include "cmlbed/data/partition.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/net/link.hpp"

namespace cmlbed {

data::DatasetSpec dataset_spec(const Settings& settings);

// Input shape and class count come from the dataset, the network from [model].
model::ModelOptions model_options(const Settings& settings);
// model.name and model.file only, without the data's shape and classes (which, for
// data.dataset = arrays, model_options reads from the data file).
model::ModelOptions model_file_options(const Settings& settings);

// The dataset with data.train_limit / data.test_limit applied.
data::Dataset load_dataset(const Settings& settings);
// Its labels and sizes alone (data::load_labels), with the same limits.
data::DatasetLabels load_labels(const Settings& settings);

data::PartitionSpec partition_spec(const Settings& settings, int devices);

enum class LinkDirection { uplink, downlink };

// The emulated link of one device (1..N) in one direction, from [network] and
// [device.K]. Throws std::invalid_argument for an unreadable or malformed rate trace.
net::LinkSpec link_spec(const Settings& settings, int device, LinkDirection direction);

// The devices (1..N) that upload raw samples: a method that splits the model (sl, sfl,
// pipar) at split 0 runs every layer on the server, which is centralised training, not
// split learning. Progress output and plans mark them.
std::vector<int> devices_uploading_raw_samples(const Settings& settings, int devices);

// The words every table and progress line puts beside a split of 0.
inline constexpr const char* kRawDataMark = "raw data uploaded";

// output.file, or results/<method>-<YYYYmmdd-HHMMSS>.h5 when it is empty.
std::string output_path(const Settings& settings, const std::string& started_at_compact);

}  // namespace cmlbed
