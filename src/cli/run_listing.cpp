#include "run_listing.hpp"

#include <iomanip>

#include "cmlbed/base/units.hpp"
#include "cmlbed/setup/derived.hpp"

namespace cmlbed::cli {
namespace {

std::string link_text(const Config& config, const std::string& rate_option, int device) {
  const auto rate = config.rate_bits_per_second(rate_option, device);
  return rate ? format_rate(*rate) : "unshaped";
}

}  // namespace

void print_run_listing(const Config& config, int devices, std::ostream& out) {
  const model::ModelOptions model = model_options(config);
  const auto layers = model::layer_stats(model);
  const data::Dataset dataset = load_dataset(config);
  const auto parts = data::partition_indices(dataset.train.labels, dataset.train.num_classes,
                                             partition_spec(config, devices));

  out << "plan: " << config.text("experiment.method") << ", "
      << config.integer("experiment.rounds") << " round(s), seed "
      << config.integer("experiment.seed") << "; server = rank 0, " << devices
      << " device(s) = ranks 1.." << devices << "\n";
  out << "model: " << model.name << " on " << model.input.to_string() << ", " << model.classes
      << " classes, " << layers.size() << " layers\n";
  out << "data: " << config.text("data.dataset") << ", " << dataset.train.size() << " train / "
      << dataset.test.size() << " test samples, partition " << config.text("data.partition")
      << "\n\n";
  out << std::left << std::setw(7) << "device" << std::setw(7) << "split" << std::setw(14)
      << "sends B/smp" << std::setw(14) << "uplink" << std::setw(14) << "downlink"
      << std::setw(10) << "burst" << std::setw(10) << "delay" << std::setw(10) << "slowdown"
      << "train samples\n";
  for (int device = 1; device <= devices; ++device) {
    const auto split = static_cast<std::size_t>(config.integer("model.split", device));
    const std::int64_t sends = split == 0 ? model.input.elements() * 4
                                          : layers[split - 1].activation_bytes_per_sample;
    out << std::setw(7) << device << std::setw(7) << split << std::setw(14) << sends
        << std::setw(14) << link_text(config, "network.uplink_rate", device) << std::setw(14)
        << link_text(config, "network.downlink_rate", device) << std::setw(10)
        << format_size(config.size("network.burst", device)) << std::setw(10)
        << format_duration(config.duration_ns("network.delay", device)) << std::setw(10)
        << config.real("devices.slowdown", device) << parts[device - 1].size() << "\n";
  }
  if (const std::vector<int> raw = devices_uploading_raw_samples(config, devices); !raw.empty()) {
    out << "split 0 on " << raw.size() << " device(s): " << kRawDataMark
        << " (every layer runs on the server: centralised training, not split learning)\n";
  }
  out << std::right << "\nresolved configuration:\n" << config.to_ini();
}

}  // namespace cmlbed::cli
