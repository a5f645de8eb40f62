#include "cmlbed/setup/derived.hpp"

#include "cmlbed/config/methods.hpp"
#include "cmlbed/data/array_file.hpp"

namespace cmlbed {

data::DatasetSpec dataset_spec(const Config& config) {
  data::DatasetSpec spec;
  spec.name = config.text("data.dataset");
  spec.dir = config.text("data.dir");
  spec.file = config.text("data.file");
  const ImageShape shape = config.shape("data.synthetic_shape");
  const auto seed = static_cast<std::uint64_t>(config.integer("experiment.seed"));
  for (data::SyntheticSpec* s : {&spec.synthetic_train, &spec.synthetic_test}) {
    s->channels = shape.channels;
    s->height = shape.height;
    s->width = shape.width;
    s->num_classes = config.integer("data.synthetic_classes");
    s->prototype_seed = seed;
  }
  spec.synthetic_train.samples = static_cast<std::size_t>(config.integer("data.synthetic_train"));
  spec.synthetic_train.seed = seed * 2 + 1;
  spec.synthetic_test.samples = static_cast<std::size_t>(config.integer("data.synthetic_test"));
  spec.synthetic_test.seed = seed * 2 + 2;
  return spec;
}

model::ModelOptions model_file_options(const Config& config) {
  model::ModelOptions options;
  options.name = config.text("model.name");
  options.file = config.text("model.file");
  return options;
}

model::ModelOptions model_options(const Config& config) {
  model::ModelOptions options = model_file_options(config);
  const std::string& dataset = config.text("data.dataset");
  if (dataset == "synthetic") {
    options.input = config.shape("data.synthetic_shape");
    options.classes = config.integer("data.synthetic_classes");
  } else if (dataset == "arrays") {  // the file's sample shape and classes
    const data::ArrayFileSummary file =
        data::inspect_array_file(config.text("data.file"), data::default_array_memory_cap());
    options.input = ImageShape{file.channels, file.height, file.width};
    options.classes = file.num_classes;
  } else if (dataset == "cifar10") {
    options.input = ImageShape{3, 32, 32};
    options.classes = 10;
  } else {  // the IDX datasets: MNIST and Fashion-MNIST
    options.input = ImageShape{1, 28, 28};
    options.classes = 10;
  }
  return options;
}

namespace {

data::ImageSet first_samples(const data::ImageSet& set, std::int64_t limit) {
  if (limit <= 0 || static_cast<std::size_t>(limit) >= set.size()) return set;
  std::vector<std::size_t> indices(static_cast<std::size_t>(limit));
  for (std::size_t i = 0; i < indices.size(); ++i) indices[i] = i;
  return set.subset(indices);
}

}  // namespace

data::Dataset load_dataset(const Config& config) {
  data::Dataset dataset = data::load_dataset(dataset_spec(config));
  dataset.train = first_samples(dataset.train, config.integer("data.train_limit"));
  dataset.test = first_samples(dataset.test, config.integer("data.test_limit"));
  return dataset;
}

data::DatasetLabels load_labels(const Config& config) {
  data::DatasetLabels labels = data::load_labels(dataset_spec(config));
  const std::int64_t train_limit = config.integer("data.train_limit");
  const std::int64_t test_limit = config.integer("data.test_limit");
  if (train_limit > 0 && static_cast<std::size_t>(train_limit) < labels.train_labels.size()) {
    labels.train_labels.resize(static_cast<std::size_t>(train_limit));
  }
  if (test_limit > 0) labels.test_samples = std::min(labels.test_samples, static_cast<std::size_t>(test_limit));
  return labels;
}

data::PartitionSpec partition_spec(const Config& config, int devices) {
  data::PartitionSpec spec;
  spec.scheme = data::parse_partition_scheme(config.text("data.partition"));
  spec.devices = devices;
  spec.alpha = config.real("data.alpha");
  spec.classes_per_device = static_cast<int>(config.integer("data.classes_per_device"));
  spec.seed = static_cast<std::uint64_t>(config.integer("experiment.seed"));
  if (spec.scheme == data::PartitionScheme::iid) {
    for (int device = 1; device <= devices; ++device) {
      spec.shares.push_back(config.real("devices.data_share", device));
    }
  }
  return spec;
}

net::LinkSpec link_spec(const Config& config, int device, LinkDirection direction) {
  const bool up = direction == LinkDirection::uplink;
  net::LinkSpec spec;
  spec.rate_bits_per_second =
      config.rate_bits_per_second(up ? "network.uplink_rate" : "network.downlink_rate", device);
  spec.burst_bytes = config.size("network.burst", device);
  spec.delay_ns = config.duration_ns("network.delay", device);
  spec.jitter_ns = config.duration_ns("network.jitter", device);
  const std::string& trace =
      config.text(up ? "network.uplink_trace" : "network.downlink_trace", device);
  if (!trace.empty()) spec.trace = net::parse_rate_trace_file(trace);
  // Each link draws its own jitter, reproducibly.
  spec.seed = static_cast<std::uint64_t>(config.integer("experiment.seed")) * 1000003ULL +
              static_cast<std::uint64_t>(device) * 2 + (up ? 0 : 1);
  return spec;
}

std::vector<int> devices_uploading_raw_samples(const Config& config, int devices) {
  if (!method_traits(config.text("experiment.method")).splits_model) return {};  // the model stays whole
  std::vector<int> raw;
  for (int device = 1; device <= devices; ++device) {
    if (config.integer("model.split", device) == 0) raw.push_back(device);
  }
  return raw;
}

std::string output_path(const Config& config, const std::string& started_at_compact) {
  const std::string& file = config.text("output.file");
  if (!file.empty()) return file;
  return "results/" + config.text("experiment.method") + "-" + started_at_compact + ".h5";
}

}  // namespace cmlbed
