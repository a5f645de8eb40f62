#include "cmlbed/setup/validate.hpp"

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <stdexcept>

#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/methods.hpp"
#include "cmlbed/data/array_file.hpp"
#include "cmlbed/data/data_error.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/trace/results_file.hpp"

namespace cmlbed {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw ConfigError(message);
}

void validate_world(const Settings& settings, int devices) {
  require(devices >= 1, "cmlbed run needs at least 2 MPI ranks (1 server + 1 device), got " +
                            std::to_string(devices + 1) +
                            "; start it as e.g. `mpirun -np 4 cmlbed run ...`");
  for (const auto& [device, overrides] : settings.config().device_overrides()) {
    require(device <= devices, "[device." + std::to_string(device) + "] is set but the run has " +
                                   std::to_string(devices) + " device(s) (MPI ranks 1.." +
                                   std::to_string(devices) + ")");
  }
}


// A method that sends no gradients back (adasplit, localloss) trains the device part on
// a loss of the device's own, read from the device part's output, and the server part on
// the uploads: each side needs layers. adasplit's server trains its part through
// per-device masks over its Conv2d and Linear weights (model/weight_masks.hpp), so that
// part must have some to mask.
void require_own_loss_split(const Settings& settings, const std::vector<model::LayerStats>& stats,
                            const std::string& model_name) {
  const MethodTraits& method = method_traits(settings.experiment.method);
  const std::int64_t split = settings.model.split.all().value();
  const auto layers = static_cast<std::int64_t>(stats.size());
  std::int64_t last = layers - 1;  // the last split allowed
  if (method.local_phase) {  // adasplit: the last layer with maskable weights stays on the server
    last = 0;
    for (std::size_t l = 0; l < stats.size(); ++l) {
      if (stats[l].maskable_values > 0) last = static_cast<std::int64_t>(l);
    }
  }
  const std::string allowed = last >= 1 ? "1.." + std::to_string(last) : std::string("no split of this model");
  require(split >= 1 && split < layers, settings.said(&settings.model.split) + ": experiment.method = " +
                                            method.name + " needs layers on both sides; allowed: " + allowed);
  std::string names;  // the server part's layers
  for (auto l = static_cast<std::size_t>(split); l < stats.size(); ++l) names += (names.empty() ? "" : " ") + stats[l].name;
  require(split <= last, settings.said(&settings.model.split) + ": experiment.method = " + method.name +
                             " masks the server part's Conv2d and Linear weights, and " + model_name + "'s layers " +
                             std::to_string(split) + ".." + std::to_string(layers - 1) + " (" + names +
                             ") have none; allowed: " + allowed);
}

void validate_model(const Settings& settings, int devices) {
  const model::ModelOptions options = model_options(settings);
  std::vector<model::LayerStats> stats;
  try {
    stats = model::layer_stats(options);
  } catch (const std::invalid_argument& e) {
    throw ConfigError("model.name = " + options.name + " with data.dataset = " +
                      settings.data.dataset + ": " + e.what());
  }
  const std::size_t layers = stats.size();
  // Every mini-batch and micro-batch trains through the whole model (device and server
  // parts), so the smallest of them must hold what its layers need.
  const std::int64_t least = model::min_training_batch(stats);
  const std::int64_t batch = settings.train.batch_size;
  const auto first_needing = [&] {
    for (std::size_t l = 0; l < layers; ++l) {
      if (stats[l].min_training_batch == least) return std::to_string(l) + " (" + stats[l].name + ")";
    }
    return std::string();
  };
  require(batch >= least, settings.said(&settings.train.batch_size) + ": " + options.name + "'s layer " +
                              first_needing() + " normalises a 1x1 feature map and needs at least " +
                              std::to_string(least) + " samples per batch to train");
  const MethodTraits& method = method_traits(settings.experiment.method);
  for (int device = 0; device <= devices && method.micro_batches; ++device) {
    // An auto count is chosen among those that train (parameter_search.cpp).
    if (settings.pipar.micro_batches.of(device).is_auto()) continue;
    const std::int64_t smallest = batch / settings.pipar.micro_batches.of(device).value();
    require(smallest >= least,
            settings.said(&settings.pipar.micro_batches, device) + " with " + settings.said(&settings.train.batch_size) +
                " makes micro-batches of " + std::to_string(smallest) + " sample(s); " + options.name +
                "'s layer " + first_needing() + " normalises a 1x1 feature map and needs at least " +
                std::to_string(least) + " to train; allowed: 1.." + std::to_string(batch / least));
  }
  // auto: refused by the planner (neither is plannable).
  if (method.check_options) method.check_options(settings, layers, devices);
  if (method.splits_model && !method.sends_gradients && !settings.model.split.all().is_auto()) {
    require_own_loss_split(settings, stats, options.name);
  }
  // Without server replicas one server part (and, taking turns, one device part) serves
  // every device, so all of them are cut at the same layer.
  const bool one_split = method.splits_model && !method.server_replicas;
  for (int device = 0; device <= devices; ++device) {
    const Auto<std::int64_t> split = settings.model.split.of(device);
    require(!one_split || split == settings.model.split.all(),
            settings.said(&settings.model.split, device) +
                ": experiment.method = " + method.name +
                (method.takes_turns ? " hands one device part from device to device"
                                    : " trains one server part for every device") +
                ", so every device needs the same split (" + settings.said(&settings.model.split) + ")");
    if (split.is_auto()) {
      // The planner's splits start at plan.min_split.
      require(settings.plan.min_split <= static_cast<std::int64_t>(layers),
              settings.said(&settings.plan.min_split) + " with " + settings.said(&settings.model.split, device) +
                  " is beyond the " + std::to_string(layers) + " layers of " + options.name + "; allowed: 0.." +
                  std::to_string(layers));
      continue;
    }
    require(split.value() <= static_cast<std::int64_t>(layers),
            settings.said(&settings.model.split, device) + " is beyond the " +
                std::to_string(layers) + " layers of " + options.name + "; allowed: 0.." +
                std::to_string(layers) + " (`cmlbed info --model " + options.name +
                " --input " + options.input.to_string() + "` lists them)");
  }
}

void validate_training(const Settings& settings, int devices) {
  for (int device = 0; device <= devices; ++device) {
    const Auto<std::int64_t> micro_batches = settings.pipar.micro_batches.of(device);
    require(micro_batches.is_auto() || micro_batches.value() <= settings.train.batch_size,
            settings.said(&settings.pipar.micro_batches, device) + " is more than " +
                settings.said(&settings.train.batch_size) +
                "; allowed: 1..train.batch_size micro-batches per mini-batch");
  }
  const MethodTraits& method = method_traits(settings.experiment.method);
  require(settings.train.server_streams == 1 || method.server_replicas,
          settings.said(&settings.train.server_streams) + " with experiment.method = " + method.name +
              ": server streams serve the per-device server replicas of " +
              method_list(&MethodTraits::server_replicas, "and") + "; " + method.name +
              " serves on one stream (set 1)");
  require(settings.train.local_epochs > 0 || settings.train.local_iterations > 0,
          "train.local_epochs = 0 and train.local_iterations = 0 leave nothing to train; set "
          "one of them above 0");
}

// train.personalised keeps a device part on each device: only methods with a device part
// that would otherwise be averaged or handed over have something to personalise.
void validate_personalised(const Settings& settings) {
  const MethodTraits& method = method_traits(settings.experiment.method);
  require(!method.personalised_always || settings.plan.replan == "off",
          "experiment.method = " + method.name + " with plan.replan = " + settings.plan.replan +
              ": a re-split moves layers between each device's own part and the one server part, which " +
              method.name + " keeps apart (each device's layers are its own); set plan.replan = off");
  if (!settings.train.personalised) return;
  require(method.personalisable, "train.personalised = true with experiment.method = " + method.name + ": " +
                                     method.personalised_refusal + "; personalised variants exist for " +
                                     method_list(&MethodTraits::personalisable, "and"));
  require(settings.plan.replan == "off",
          "train.personalised = true with plan.replan = " + settings.plan.replan +
              ": a re-split cuts the new parts from one averaged model, which a personalised run does "
              "not have (each device's layers are its own); set plan.replan = off");
}

// auto is the planner's: only a plannable method has it, and micro-batches only where
// the method cuts mini-batches.
void validate_autos(const Settings& settings, int devices) {
  const MethodTraits& method = method_traits(settings.experiment.method);
  for (int device = 0; device <= devices; ++device) {
    const bool split_auto = settings.model.split.of(device).is_auto();
    const bool micro_auto = settings.pipar.micro_batches.of(device).is_auto();
    require(!(split_auto || micro_auto) || method.plannable,
            "auto needs experiment.method = " + method_list(&MethodTraits::plannable, "or") +
                " (the planner chooses their split point and micro-batches); experiment.method = " + method.name);
    require(!micro_auto || method.micro_batches,
            settings.said(&settings.pipar.micro_batches, device) + " with experiment.method = " + method.name +
                ": only " + method_list(&MethodTraits::micro_batches, "and") + " uses micro-batches");
  }
}

void validate_adasplit(const Settings& settings, int devices) {
  if (!method_traits(settings.experiment.method).local_phase) return;
  require(settings.adasplit.selected <= devices,
          settings.said(&settings.adasplit.selected) + " is more than the " + std::to_string(devices) +
              " device(s); allowed: 1.." + std::to_string(devices) + " devices per iteration");
}

// devices.flops paces each stage to its FLOPs; a slowdown on top would stretch a pace
// that no longer depends on this machine, so a device gets one or the other.
void validate_device_speed(const Settings& settings, int devices) {
  for (int device = 1; device <= devices; ++device) {
    require(!settings.devices.flops.of(device) || settings.devices.slowdown.of(device) == 1.0,
            settings.said(&settings.devices.flops, device) + " and " +
                settings.said(&settings.devices.slowdown, device) +
                " are both set; a device's speed is either a compute rate or a slowdown of this "
                "machine's");
  }
}

void validate_privacy(const Settings& settings) {
  const MethodTraits& method = method_traits(settings.experiment.method);
  const std::string& mechanism = settings.privacy.mechanism;
  const std::vector<std::string>& allowed = method.privacy_mechanisms;
  const std::string why = method.noise == NoiseTarget::nothing        ? "it sends no training data to protect"
                          : method.noise == NoiseTarget::model_updates ? "DP-FedAvg adds Gaussian noise"
                                                                       : "its activations take these";
  std::string allowed_text;
  for (const std::string& name : allowed) allowed_text += (allowed_text.empty() ? "" : ", ") + name;
  require(std::find(allowed.begin(), allowed.end(), mechanism) != allowed.end(),
          "privacy.mechanism = " + mechanism + " with experiment.method = " + method.name + ": " + why +
              "; allowed: " + allowed_text);
}

void validate_partition(const Settings& settings, int devices) {
  const std::string scheme = settings.data.partition;
  if (scheme != "iid") {
    require(!settings.user_set(&settings.devices.data_share),
            "devices.data_share applies to data.partition = iid only, but data.partition = " +
                scheme);
  }
  if (scheme == "shards") {
    const std::int64_t k = settings.data.classes_per_device;
    const std::int64_t classes = model_options(settings).classes;
    require(k <= classes, settings.said(&settings.data.classes_per_device) + " is more than the " +
                              std::to_string(classes) + " classes of the dataset");
    require(k * devices >= classes,
            settings.said(&settings.data.classes_per_device) + " with " + std::to_string(devices) +
                " devices leaves classes unassigned; need devices x classes_per_device >= " +
                std::to_string(classes));
  }
}

void validate_data_files(const Settings& settings) {
  const data::DatasetSpec spec = dataset_spec(settings);
  if (spec.name == "synthetic") return;
  if (spec.name == "arrays") {
    require(!spec.file.empty(), "data.dataset = arrays needs data.file (an .npz or HDF5 file of arrays; "
                                "docs/how-to/own-data.md)");
    try {
      data::inspect_array_file(spec.file, data::default_array_memory_cap());
    } catch (const data::DataError& e) {
      throw ConfigError(std::string("data.file = ") + e.what());
    }
    return;
  }
  require(spec.name == "fashion-mnist" || !spec.dir.empty(),
          "data.dataset = " + spec.name + " needs data.dir (the directory holding its files)");
  if (!spec.dir.empty()) {
    require(std::filesystem::is_directory(spec.dir),
            "data.dir = " + spec.dir + " is not a directory");
  }
  for (const std::string& path : data::required_files(spec)) {
    require(std::ifstream(path).good(),
            "data file " + path + " for data.dataset = " + spec.name +
                " does not exist or cannot be read" +
                (spec.name == "fashion-mnist" && spec.dir.empty()
                     ? " (install Debian's dataset-fashion-mnist package)"
                     : ""));
  }
}

void validate_model_file(const Settings& settings) {
  const std::string& name = settings.model.name;
  const std::string& file = settings.model.file;
  if (name == model::kTorchScript) {
    require(!file.empty(), "model.name = torchscript needs model.file (a module saved by torch.jit.save; "
                           "docs/how-to/own-model.md)");
  } else {
    require(file.empty(), "model.file = " + file + " is set but model.name = " + name +
                              "; set model.name = torchscript to train the file's module");
  }
}

void validate_links(const Settings& settings, int devices) {
  for (int device = 1; device <= devices; ++device) {
    for (const auto direction : {LinkDirection::uplink, LinkDirection::downlink}) {
      const char* name = direction == LinkDirection::uplink ? "uplink" : "downlink";
      try {
        net::validate_link_spec(link_spec(settings, device, direction));
      } catch (const std::invalid_argument& e) {
        throw ConfigError("network settings of device " + std::to_string(device) + "'s " + name +
                          ": " + e.what());
      }
    }
  }
}

void validate_output(const Settings& settings) {
  try {
    trace::ResultsFile::check_can_create(settings.output.file, settings.output.overwrite);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(e.what());  // names output.file, the path and the way out
  }
}

}  // namespace

void validate_config(const Settings& settings, int mpi_size, bool check_output) {
  const int devices = mpi_size - 1;
  validate_world(settings, devices);
  validate_links(settings, devices);
  if (check_output) validate_output(settings);
  validate_data_files(settings);  // first: the checks below read the arrays file's shape and classes
  validate_model_file(settings);
  validate_training(settings, devices);
  validate_autos(settings, devices);
  validate_adasplit(settings, devices);
  validate_personalised(settings);
  validate_device_speed(settings, devices);
  validate_privacy(settings);
  validate_partition(settings, devices);
  validate_model(settings, devices);
}

}  // namespace cmlbed
