#pragma once
// The configuration of a run as typed values, one struct per section of the option
// table: `settings.train.batch_size`, `settings.devices.flops.of(3)`. It is read from a
// resolved Config once (Settings::from), which has checked every value's type and range;
// code outside src/config/ reads these fields and never an option's name. Each row of
// the option table names its field (CMLBED_FIELD, option_rows.hpp); the first settings
// read check that every field can hold its option's values and that no two share one.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cmlbed/base/image_shape.hpp"
#include "cmlbed/config/config.hpp"

namespace cmlbed {

// A value, or `auto`: chosen by the planner before the run (model.split,
// pipar.micro_batches). Reading the value of an auto is a logic error: plan first.
template <class T>
class Auto {
 public:
  static Auto automatic() { return Auto(); }
  Auto(T value) : value_(std::move(value)) {}  // NOLINT: a plain value converts

  bool is_auto() const { return !value_.has_value(); }
  const T& value() const {
    if (!value_) {
      throw std::logic_error("an auto setting is chosen by the planner before the run "
                             "(docs/explanation/simulator.md); it has no value to read yet");
    }
    return *value_;
  }
  bool operator==(const Auto& other) const { return value_ == other.value_; }

 private:
  Auto() = default;
  std::optional<T> value_;
};

// A per-device option: device K's value (its [device.K] override, its draw from a
// distribution, or the value for all devices); device 0 is the value for all devices.
template <class T>
class PerDevice {
 public:
  using Read = std::function<T(int device)>;
  PerDevice() = default;
  explicit PerDevice(Read read) : read_(std::move(read)) {}

  T of(int device) const { return read_(device); }
  T all() const { return read_(0); }

 private:
  Read read_;
};

using Nanoseconds = std::chrono::nanoseconds;

struct ExperimentSection {
  std::string method;
  std::int64_t rounds = 0;
  std::int64_t seed = 0;
  Nanoseconds timeout{0};
};

struct ModelSection {
  std::string name;
  std::string file;
  PerDevice<Auto<std::int64_t>> split;
};

struct DataSection {
  std::string dataset, dir, file, partition;
  double alpha = 0;
  std::int64_t classes_per_device = 0, train_limit = 0, test_limit = 0;
  ImageShape synthetic_shape;
  std::int64_t synthetic_classes = 0, synthetic_train = 0, synthetic_test = 0;
};

struct TrainSection {
  std::int64_t batch_size = 0;
  std::string optimizer;
  double lr = 0, momentum = 0, weight_decay = 0;
  std::string optimizer_state;
  bool personalised = false;
  std::int64_t local_epochs = 0, local_iterations = 0, aggregate_every = 0;
  std::int64_t server_threads = 0, server_streams = 0, device_threads = 0;
};

struct SlSection {
  std::int64_t batches_per_turn = 0;
};

struct PiparSection {
  PerDevice<Auto<std::int64_t>> micro_batches;
  std::int64_t min_micro_batch = 0;
};

struct PlanSection {
  std::string profile;
  std::int64_t min_split = 0;
  std::optional<std::int64_t> host_cores;  // none: `placement`, from where MPI placed the ranks
  Nanoseconds host_slice{0};
  std::string check_pacing, replan;
};

struct AdaSplitSection {
  double local_fraction = 0;
  std::int64_t selected = 0;
  std::string orchestrator;
  double discount = 0, temperature = 0, l1 = 0;
  std::int64_t embedding_dim = 0, head_channels = 0;
};

struct LocalLossSection {
  std::int64_t upload_every = 0, head_hidden = 0;
};

struct UShapedSection {
  std::optional<std::int64_t> tail;  // none: the last layer
};

struct NetworkSection {
  PerDevice<std::optional<double>> uplink_rate, downlink_rate;  // bits/s; none: unshaped
  PerDevice<std::uint64_t> burst;                               // bytes
  PerDevice<Nanoseconds> delay, jitter;
  PerDevice<std::string> uplink_trace, downlink_trace;          // CSV files; "": none
};

struct DevicesSection {
  PerDevice<double> slowdown;
  PerDevice<std::optional<double>> flops;  // FLOP/s; none: this machine's speed
  PerDevice<double> data_share;
};

struct TransferSection {
  std::uint64_t bytes = 0;
  Nanoseconds compute{0};
};

struct PrivacySection {
  std::string mechanism;
  double clip = 0, noise_multiplier = 0, delta = 0;
  std::string adjacency;
};

struct EvaluationSection {
  std::string scope;
};

struct OutputSection {
  std::string file;
  bool overwrite = false, timeline = false, progress = false;
  std::int64_t checkpoint = 0;
};

struct Settings {
  ExperimentSection experiment;
  ModelSection model;
  DataSection data;
  TrainSection train;
  SlSection sl;
  PiparSection pipar;
  PlanSection plan;
  AdaSplitSection adasplit;
  LocalLossSection localloss;
  UShapedSection ushaped;
  NetworkSection network;
  DevicesSection devices;
  TransferSection transfer;
  PrivacySection privacy;
  EvaluationSection evaluation;
  OutputSection output;

  // Every option of `config` in its field. Implicit, so that code and tests holding a
  // Config may pass it where settings are read.
  Settings(const Config& config);  // NOLINT(google-explicit-constructor)
  static Settings from(const Config& config) { return Settings(config); }
  static Settings defaults() { return from(Config::defaults()); }

  // The resolved configuration these settings were read from (its INI text goes into
  // results files; which options the user set, and for which devices).
  const Config& config() const { return *config_; }

  // These settings with the planner's choice in place of an auto option's autos
  // (with_chosen(&Settings::model, &ModelSection::split, ...)): `uniform` where the value
  // for all devices is auto, and device K's own `per_device[K-1]` where its value is auto
  // and differs from `uniform` or was set auto in [device.K]. The configuration's text,
  // stored in results files, holds the chosen values.
  template <class Section, class Field>
  Settings with_chosen(Section Settings::*section, Field Section::*field, std::int64_t uniform,
                       const std::vector<std::int64_t>& per_device) const {
    return with_chosen_at(&(this->*section.*field), uniform, per_device);
  }
  // Whether any device of `devices` (or the value for all) leaves an option to the planner.
  bool any_auto(int device_count) const;

  // The name of the option whose field is `field` (a field of this object, e.g.
  // `&settings.train.lr`): "train.lr"; for a device above 0 of a per-device option,
  // "device.K.lr". std::logic_error for an address that is no option's field.
  std::string name_of(const void* field, int device = 0) const;
  // The name of an option from its section and field, where no settings are at hand:
  // Settings::name(&Settings::output, &OutputSection::file) is "output.file".
  template <class Section, class Field>
  static std::string name(Section Settings::*section, Field Section::*field) {
    const Settings& any = defaults_instance();
    return any.name_of(&(any.*section.*field));
  }
  // "train.lr = 0.01" as the user wrote it: for messages that name a setting.
  std::string said(const void* field, int device = 0) const;
  // True when the user set the option (file or command line), globally or for a device.
  bool user_set(const void* field) const;
  // The field of option `name` ("train.lr") in this object, for code that walks the
  // option table (std::logic_error for no such option).
  const void* field_of(const std::string& name) const;

 private:
  static const Settings& defaults_instance();
  Settings with_chosen_at(const void* field, std::int64_t uniform, const std::vector<std::int64_t>& per_device) const;
  std::shared_ptr<const Config> config_;
};

}  // namespace cmlbed
