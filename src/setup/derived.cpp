#include "cmlbed/setup/derived.hpp"

#include "cmlbed/base/seed_streams.hpp"
#include "cmlbed/config/methods.hpp"
#include "cmlbed/data/array_file.hpp"

namespace cmlbed {

data::DatasetSpec dataset_spec(const Settings& settings) {
  data::DatasetSpec spec;
  spec.name = settings.data.dataset;
  spec.dir = settings.data.dir;
  spec.file = settings.data.file;
  const ImageShape shape = settings.data.synthetic_shape;
  const auto seed = static_cast<std::uint64_t>(settings.experiment.seed);
  for (data::SyntheticSpec* s : {&spec.synthetic_train, &spec.synthetic_test}) {
    s->channels = shape.channels;
    s->height = shape.height;
    s->width = shape.width;
    s->num_classes = settings.data.synthetic_classes;
    s->prototype_seed = stream_seed(seed, "synthetic_prototypes");
  }
  spec.synthetic_train.samples = static_cast<std::size_t>(settings.data.synthetic_train);
  spec.synthetic_train.seed = stream_seed(seed, "synthetic_train");
  spec.synthetic_test.samples = static_cast<std::size_t>(settings.data.synthetic_test);
  spec.synthetic_test.seed = stream_seed(seed, "synthetic_test");
  return spec;
}

model::ModelOptions model_file_options(const Settings& settings) {
  model::ModelOptions options;
  options.name = settings.model.name;
  options.file = settings.model.file;
  return options;
}

model::ModelOptions model_options(const Settings& settings) {
  model::ModelOptions options = model_file_options(settings);
  const std::string& dataset = settings.data.dataset;
  if (dataset == "synthetic") {
    options.input = settings.data.synthetic_shape;
    options.classes = settings.data.synthetic_classes;
  } else if (dataset == "arrays") {  // the file's sample shape and classes
    const data::ArrayFileSummary file =
        data::inspect_array_file(settings.data.file, data::default_array_memory_cap());
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

data::Dataset load_dataset(const Settings& settings) {
  data::Dataset dataset = data::load_dataset(dataset_spec(settings));
  dataset.train = first_samples(dataset.train, settings.data.train_limit);
  dataset.test = first_samples(dataset.test, settings.data.test_limit);
  return dataset;
}

data::DatasetLabels load_labels(const Settings& settings) {
  data::DatasetLabels labels = data::load_labels(dataset_spec(settings));
  const std::int64_t train_limit = settings.data.train_limit;
  const std::int64_t test_limit = settings.data.test_limit;
  if (train_limit > 0 && static_cast<std::size_t>(train_limit) < labels.train_labels.size()) {
    labels.train_labels.resize(static_cast<std::size_t>(train_limit));
  }
  if (test_limit > 0) labels.test_samples = std::min(labels.test_samples, static_cast<std::size_t>(test_limit));
  return labels;
}

data::PartitionSpec partition_spec(const Settings& settings, int devices) {
  data::PartitionSpec spec;
  spec.scheme = data::parse_partition_scheme(settings.data.partition);
  spec.devices = devices;
  spec.alpha = settings.data.alpha;
  spec.classes_per_device = static_cast<int>(settings.data.classes_per_device);
  spec.seed = stream_seed(static_cast<std::uint64_t>(settings.experiment.seed), "partition");
  if (spec.scheme == data::PartitionScheme::iid) {
    for (int device = 1; device <= devices; ++device) {
      spec.shares.push_back(settings.devices.data_share.of(device));
    }
  }
  return spec;
}

net::LinkSpec link_spec(const Settings& settings, int device, LinkDirection direction) {
  const bool up = direction == LinkDirection::uplink;
  net::LinkSpec spec;
  spec.rate_bits_per_second = (up ? settings.network.uplink_rate : settings.network.downlink_rate).of(device);
  spec.burst_bytes = settings.network.burst.of(device);
  spec.delay_ns = settings.network.delay.of(device).count();
  spec.jitter_ns = settings.network.jitter.of(device).count();
  const std::string trace = (up ? settings.network.uplink_trace : settings.network.downlink_trace).of(device);
  if (!trace.empty()) spec.trace = net::parse_rate_trace_file(trace);
  // Each link draws its own jitter, reproducibly.
  spec.seed = stream_seed(static_cast<std::uint64_t>(settings.experiment.seed), up ? "uplink_jitter" : "downlink_jitter",
                          {device});
  return spec;
}

std::vector<int> devices_uploading_raw_samples(const Settings& settings, int devices) {
  if (!method_traits(settings.experiment.method).splits_model) return {};  // the model stays whole
  std::vector<int> raw;
  for (int device = 1; device <= devices; ++device) {
    if (settings.model.split.of(device) == Auto<std::int64_t>(0)) raw.push_back(device);
  }
  return raw;
}

std::string output_path(const Settings& settings, const std::string& started_at_compact) {
  const std::string& file = settings.output.file;
  if (!file.empty()) return file;
  return "results/" + settings.experiment.method + "-" + started_at_compact + ".h5";
}

}  // namespace cmlbed
