#include "cmlbed/config/settings.hpp"

#include <set>
#include <type_traits>
#include <vector>

#include "cmlbed/config/option_table.hpp"

namespace cmlbed {
namespace {

template <class T>
struct is_per_device : std::false_type {};
template <class T>
struct is_per_device<PerDevice<T>> : std::true_type {};
template <class T>
struct is_auto : std::false_type {};
template <class T>
struct is_auto<Auto<T>> : std::true_type {};

// Whether a field of type T can hold the option's values (checked once per binding, so
// that a field of the wrong type is found by the first program that reads settings).
template <class T>
bool holds(const OptionSpec& spec) {
  using Type = OptionType;
  if constexpr (is_per_device<T>::value) {
    return spec.per_device && holds<decltype(std::declval<T>().all())>(spec);
  } else if constexpr (is_auto<T>::value) {
    return spec.allows_auto && spec.type == Type::integer;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return spec.type == Type::text || spec.type == Type::choice || spec.type == Type::path;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return spec.type == Type::integer && !spec.allows_auto && spec.word.empty();
  } else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>) {
    return spec.type == Type::integer && !spec.word.empty();
  } else if constexpr (std::is_same_v<T, double>) {
    return spec.type == Type::real;
  } else if constexpr (std::is_same_v<T, bool>) {
    return spec.type == Type::flag;
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    return spec.type == Type::size;
  } else if constexpr (std::is_same_v<T, Nanoseconds>) {
    return spec.type == Type::duration;
  } else if constexpr (std::is_same_v<T, ImageShape>) {
    return spec.type == Type::shape;
  } else if constexpr (std::is_same_v<T, std::optional<double>>) {
    return spec.type == Type::rate || spec.type == Type::compute_rate;
  } else {
    static_assert(sizeof(T) == 0, "a settings field of a type the option table has no reader for");
  }
}

template <class T>
T read_value(const Config& config, const OptionSpec& spec, int device) {
  const std::string& name = spec.name;
  if constexpr (is_auto<T>::value) {
    if (config.text(name, device) == "auto") return T::automatic();
    return T(read_value<std::int64_t>(config, spec, device));
  } else if constexpr (std::is_same_v<T, std::string>) {
    return config.text(name, device);
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return config.integer(name, device);
  } else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>) {
    if (config.text(name, device) == spec.word) return std::nullopt;
    return config.integer(name, device);
  } else if constexpr (std::is_same_v<T, double>) {
    return config.real(name, device);
  } else if constexpr (std::is_same_v<T, bool>) {
    return config.flag(name);
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    return config.size(name, device);
  } else if constexpr (std::is_same_v<T, Nanoseconds>) {
    return Nanoseconds(config.duration_ns(name, device));
  } else if constexpr (std::is_same_v<T, ImageShape>) {
    return config.shape(name);
  } else if constexpr (std::is_same_v<T, std::optional<double>>) {
    return spec.type == OptionType::rate ? config.rate_bits_per_second(name, device)
                                         : config.compute_rate_flops(name, device);
  }
}

// One option's field: how to read it into a Settings, and where it lies in one.
struct Binding {
  std::string name;
  std::function<void(const std::shared_ptr<const Config>&, Settings&)> read;
  std::function<const void*(const Settings&)> field;
};

template <class Section, class Field>
Binding bind_field(std::string name, Section Settings::*section, Field Section::*member) {
  const OptionSpec* spec = find_option(name);
  if (spec == nullptr || !holds<Field>(*spec)) {
    throw std::logic_error("settings: the field of " + name +
                           (spec ? " cannot hold its values" : " has no option in the option table"));
  }
  Binding binding;
  binding.name = name;
  binding.read = [spec, section, member](const std::shared_ptr<const Config>& config, Settings& settings) {
    Field& field = settings.*section.*member;
    if constexpr (is_per_device<Field>::value) {
      using Value = decltype(field.all());
      field = Field([config, spec](int device) { return read_value<Value>(*config, *spec, device); });
    } else {
      field = read_value<Field>(*config, *spec, 0);
    }
  };
  binding.field = [section, member](const Settings& settings) -> const void* {
    return &(settings.*section.*member);
  };
  return binding;
}

// The section's field named as the option's key, so that a field's name is its option's.
#define CMLBED_BIND(section, key) bind_field(#section "." #key, &Settings::section, &decltype(Settings::section)::key)

std::vector<Binding> build_bindings() {
  std::vector<Binding> bindings = {
      CMLBED_BIND(experiment, method),
      CMLBED_BIND(experiment, rounds),
      CMLBED_BIND(experiment, seed),
      CMLBED_BIND(experiment, timeout),
      CMLBED_BIND(model, name),
      CMLBED_BIND(model, file),
      CMLBED_BIND(model, split),
      CMLBED_BIND(data, dataset),
      CMLBED_BIND(data, dir),
      CMLBED_BIND(data, file),
      CMLBED_BIND(data, partition),
      CMLBED_BIND(data, alpha),
      CMLBED_BIND(data, classes_per_device),
      CMLBED_BIND(data, train_limit),
      CMLBED_BIND(data, test_limit),
      CMLBED_BIND(data, synthetic_shape),
      CMLBED_BIND(data, synthetic_classes),
      CMLBED_BIND(data, synthetic_train),
      CMLBED_BIND(data, synthetic_test),
      CMLBED_BIND(train, batch_size),
      CMLBED_BIND(train, optimizer),
      CMLBED_BIND(train, lr),
      CMLBED_BIND(train, momentum),
      CMLBED_BIND(train, weight_decay),
      CMLBED_BIND(train, optimizer_state),
      CMLBED_BIND(train, personalised),
      CMLBED_BIND(train, local_epochs),
      CMLBED_BIND(train, local_iterations),
      CMLBED_BIND(train, aggregate_every),
      CMLBED_BIND(train, server_threads),
      CMLBED_BIND(train, server_streams),
      CMLBED_BIND(train, device_threads),
      CMLBED_BIND(sl, batches_per_turn),
      CMLBED_BIND(pipar, micro_batches),
      CMLBED_BIND(pipar, min_micro_batch),
      CMLBED_BIND(plan, profile),
      CMLBED_BIND(plan, min_split),
      CMLBED_BIND(plan, host_cores),
      CMLBED_BIND(plan, host_slice),
      CMLBED_BIND(plan, check_pacing),
      CMLBED_BIND(plan, replan),
      CMLBED_BIND(adasplit, local_fraction),
      CMLBED_BIND(adasplit, selected),
      CMLBED_BIND(adasplit, orchestrator),
      CMLBED_BIND(adasplit, discount),
      CMLBED_BIND(adasplit, temperature),
      CMLBED_BIND(adasplit, l1),
      CMLBED_BIND(adasplit, embedding_dim),
      CMLBED_BIND(adasplit, head_channels),
      CMLBED_BIND(network, uplink_rate),
      CMLBED_BIND(network, downlink_rate),
      CMLBED_BIND(network, burst),
      CMLBED_BIND(network, delay),
      CMLBED_BIND(network, jitter),
      CMLBED_BIND(network, uplink_trace),
      CMLBED_BIND(network, downlink_trace),
      CMLBED_BIND(devices, slowdown),
      CMLBED_BIND(devices, flops),
      CMLBED_BIND(devices, data_share),
      CMLBED_BIND(transfer, bytes),
      CMLBED_BIND(transfer, compute),
      CMLBED_BIND(privacy, mechanism),
      CMLBED_BIND(privacy, clip),
      CMLBED_BIND(privacy, noise_multiplier),
      CMLBED_BIND(privacy, delta),
      CMLBED_BIND(privacy, adjacency),
      CMLBED_BIND(evaluation, scope),
      CMLBED_BIND(output, file),
      CMLBED_BIND(output, overwrite),
      CMLBED_BIND(output, timeline),
      CMLBED_BIND(output, progress),
      CMLBED_BIND(output, checkpoint),
  };
  // Every option has exactly one field.
  std::set<std::string> bound;
  for (const Binding& binding : bindings) {
    if (!bound.insert(binding.name).second) throw std::logic_error("settings: " + binding.name + " is bound twice");
  }
  for (const OptionSpec& spec : option_table()) {
    if (!bound.count(spec.name)) throw std::logic_error("settings: option " + spec.name + " has no field");
  }
  return bindings;
}

#undef CMLBED_BIND

const std::vector<Binding>& bindings() {
  static const std::vector<Binding> all = build_bindings();
  return all;
}

const Binding& binding_of(const Settings& settings, const void* field) {
  for (const Binding& binding : bindings()) {
    if (binding.field(settings) == field) return binding;
  }
  throw std::logic_error("settings: an address that is no option's field of these settings");
}

}  // namespace

Settings::Settings(const Config& config) : config_(std::make_shared<const Config>(config)) {
  for (const Binding& binding : bindings()) binding.read(config_, *this);
}

Settings Settings::with_chosen_at(const void* field, std::int64_t uniform,
                               const std::vector<std::int64_t>& per_device) const {
  const std::string& name = binding_of(*this, field).name;
  if (!find_option(name)->allows_auto) throw std::logic_error("settings: " + name + " cannot be auto");
  const std::string origin = "the planner (auto)";
  std::vector<RawSetting> chosen;
  const bool all_auto = config_->text(name) == "auto";
  if (all_auto) chosen.push_back({name, std::to_string(uniform), origin});
  const auto& overrides = config_->device_overrides();
  for (int device = 1; device <= static_cast<int>(per_device.size()); ++device) {
    if (config_->text(name, device) != "auto") continue;
    const std::int64_t own = per_device[static_cast<std::size_t>(device - 1)];
    const auto section = overrides.find(device);
    const bool set_in_section = section != overrides.end() && section->second.count(name) > 0;
    if (own != uniform || set_in_section || !all_auto) chosen.push_back({name_of(field, device), std::to_string(own), origin});
  }
  return Settings(config_->with_settings(chosen));
}

const Settings& Settings::defaults_instance() {
  static const Settings defaults = Settings::defaults();
  return defaults;
}

bool Settings::any_auto(int devices) const {
  for (int device = 0; device <= devices; ++device) {
    if (model.split.of(device).is_auto() || pipar.micro_batches.of(device).is_auto()) return true;
  }
  return false;
}

std::string Settings::name_of(const void* field, int device) const {
  const std::string& name = binding_of(*this, field).name;
  if (device == 0) return name;
  return "device." + std::to_string(device) + name.substr(name.find('.'));
}

std::string Settings::said(const void* field, int device) const {
  return name_of(field, device) + " = " + config_->text(binding_of(*this, field).name, device);
}

bool Settings::user_set(const void* field) const { return config_->user_set(binding_of(*this, field).name); }

const void* Settings::field_of(const std::string& name) const {
  for (const Binding& binding : bindings()) {
    if (binding.name == name) return binding.field(*this);
  }
  throw std::logic_error("settings: no option " + name);
}

}  // namespace cmlbed
