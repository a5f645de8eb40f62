#pragma once
// The words a row of the option table is written in: option(CMLBED_FIELD(train, lr),
// OptionType::real, "0.01", "", "help") and the modifiers around it (bounded, choice,
// per_device, ...). The option table (option_table.cpp) and the methods' own options
// (MethodTraits::options, methods.cpp) are written with them.
//
// CMLBED_FIELD(train, lr), a row's first argument, gives the row its name, "train.lr", and a binding to `Settings::train.lr`. The
// field's name is the option's key, so that the map from options to fields is the
// identity; Settings reads every row's binding (settings.cpp), and checks once that the
// field's type can hold the row's values and that no two rows share a field.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cmlbed/config/option_table.hpp"
#include "cmlbed/config/settings.hpp"

namespace cmlbed {

// One option's field: whether it can hold the row's values, how to read it from a
// Config into a Settings, and where it lies in one.
struct OptionBinding {
  std::function<bool(const OptionSpec&)> holds;
  std::function<void(const std::shared_ptr<const Config>&, const OptionSpec&, Settings&)> read;
  std::function<const void*(const Settings&)> field;
};

// An option's name with its field (what CMLBED_FIELD makes): the first argument of a row.
struct BoundName {
  std::string name;  // "section.key"
  std::shared_ptr<const OptionBinding> binding;
};

namespace binding_detail {

template <class T>
struct is_per_device : std::false_type {};
template <class T>
struct is_per_device<PerDevice<T>> : std::true_type {};
template <class T>
struct is_auto : std::false_type {};
template <class T>
struct is_auto<Auto<T>> : std::true_type {};

// Whether a field of type T can hold one of the option's values.
template <class T>
bool holds_value(const OptionSpec& spec) {
  using Type = OptionType;
  if constexpr (is_auto<T>::value) {
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

// Whether a field of type T can hold the option: a value per device exactly where the
// option may differ per device (a plain field would drop the [device.K] values).
template <class T>
bool holds(const OptionSpec& spec) {
  if constexpr (is_per_device<T>::value) {
    return spec.per_device && holds_value<decltype(std::declval<T>().all())>(spec);
  } else {
    return !spec.per_device && holds_value<T>(spec);
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

}  // namespace binding_detail

template <class Section, class Field>
BoundName bound_name(std::string name, Section Settings::*section, Field Section::*member) {
  auto binding = std::make_shared<OptionBinding>();
  binding->holds = [](const OptionSpec& spec) { return binding_detail::holds<Field>(spec); };
  binding->read = [section, member](const std::shared_ptr<const Config>& config, const OptionSpec& spec,
                                    Settings& settings) {
    Field& field = settings.*section.*member;
    if constexpr (binding_detail::is_per_device<Field>::value) {
      using Value = decltype(field.all());
      // The row outlives every Settings (the table is static); the Config is shared.
      const OptionSpec* row = &spec;
      field = Field([config, row](int device) { return binding_detail::read_value<Value>(*config, *row, device); });
    } else {
      field = binding_detail::read_value<Field>(*config, spec, 0);
    }
  };
  binding->field = [section, member](const Settings& settings) -> const void* { return &(settings.*section.*member); };
  return {std::move(name), std::move(binding)};
}

}  // namespace cmlbed

// The option `section.key` and the field Settings::section.key that holds it.
#define CMLBED_FIELD(section, key) \
  ::cmlbed::bound_name(#section "." #key, &::cmlbed::Settings::section, &decltype(::cmlbed::Settings::section)::key)

namespace cmlbed::rows {

OptionSpec option(BoundName name, OptionType type, std::string default_value, std::string unit, std::string help);
// Values in [min, max] (integer, real and size options).
OptionSpec bounded(OptionSpec spec, double min, double max);
// One of `choices` (words).
OptionSpec choice(BoundName name, std::string default_value, std::vector<std::string> choices, std::string help);
// May be `auto` (OptionSpec::allows_auto).
OptionSpec autoable(OptionSpec spec);
// Takes `word` besides the type's values (OptionSpec::word).
OptionSpec with_word(OptionSpec spec, std::string word);
// May be set for one device in [device.K].
OptionSpec per_device(OptionSpec spec);
// A per-device option whose value may be drawn per device from a distribution.
OptionSpec drawn_per_device(OptionSpec spec);
// An option a resumed run may change (OptionSpec::resume_may_change).
OptionSpec changeable_on_resume(OptionSpec spec);
// An option added after results files were written without it, which those runs ran
// as `value_then` (OptionSpec::value_before_it_existed).
OptionSpec existed_later(OptionSpec spec, std::string value_then);

}  // namespace cmlbed::rows
