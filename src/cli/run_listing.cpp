#include "run_listing.hpp"

#include <iomanip>

#include "cmlbed/base/units.hpp"
#include "cmlbed/setup/derived.hpp"

namespace cmlbed::cli {
namespace {

std::string link_text(const std::optional<double>& rate) { return rate ? format_rate(*rate) : "unshaped"; }

}  // namespace

void print_run_listing(const Settings& settings, int devices, std::ostream& out) {
  const model::ModelOptions model = model_options(settings);
  const auto layers = model::layer_stats(model);
  const data::Dataset dataset = load_dataset(settings);
  const auto parts = data::partition_indices(dataset.train.labels, dataset.train.num_classes,
                                             partition_spec(settings, devices));

  out << "plan: " << settings.experiment.method << ", "
      << settings.experiment.rounds << " round(s), seed "
      << settings.experiment.seed << "; server = rank 0, " << devices
      << " device(s) = ranks 1.." << devices << "\n";
  out << "model: " << model.name << " on " << model.input.to_string() << ", " << model.classes
      << " classes, " << layers.size() << " layers\n";
  out << "data: " << settings.data.dataset << ", " << dataset.train.size() << " train / "
      << dataset.test.size() << " test samples, partition " << settings.data.partition
      << "\n\n";
  out << std::left << std::setw(7) << "device" << std::setw(7) << "split" << std::setw(14)
      << "sends B/smp" << std::setw(14) << "uplink" << std::setw(14) << "downlink"
      << std::setw(10) << "burst" << std::setw(10) << "delay" << std::setw(10) << "slowdown"
      << "train samples\n";
  for (int device = 1; device <= devices; ++device) {
    const Auto<std::int64_t> split = settings.model.split.of(device);
    std::string sends = "-";  // auto: the planner's split decides
    if (!split.is_auto()) {
      const auto p = static_cast<std::size_t>(split.value());
      sends = std::to_string(p == 0 ? model.input.elements() * 4 : layers[p - 1].activation_bytes_per_sample);
    }
    out << std::setw(7) << device << std::setw(7) << (split.is_auto() ? "auto" : std::to_string(split.value()))
        << std::setw(14) << sends << std::setw(14) << link_text(settings.network.uplink_rate.of(device))
        << std::setw(14) << link_text(settings.network.downlink_rate.of(device)) << std::setw(10)
        << format_size(settings.network.burst.of(device)) << std::setw(10)
        << format_duration(settings.network.delay.of(device).count()) << std::setw(10)
        << settings.devices.slowdown.of(device) << parts[device - 1].size() << "\n";
  }
  if (const std::vector<int> raw = devices_uploading_raw_samples(settings, devices); !raw.empty()) {
    out << "split 0 on " << raw.size() << " device(s): " << kRawDataMark
        << " (every layer runs on the server: centralised training, not split learning)\n";
  }
  out << std::right << "\nresolved configuration:\n" << settings.config().to_ini();
}

}  // namespace cmlbed::cli
