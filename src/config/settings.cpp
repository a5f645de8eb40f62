#include "cmlbed/config/settings.hpp"

#include <set>
#include <vector>

#include "cmlbed/config/option_rows.hpp"
#include "cmlbed/config/option_table.hpp"

namespace cmlbed {
namespace {

// Every option's binding (its row's CMLBED_FIELD), checked once: every row has a field
// that can hold its values.
std::vector<const OptionSpec*> build_bindings() {
  std::vector<const OptionSpec*> rows;
  for (const OptionSpec& spec : option_table()) {
    if (!spec.binding) throw std::logic_error("settings: option " + spec.name + " has no field");
    if (!spec.binding->holds(spec)) throw std::logic_error("settings: the field of " + spec.name + " cannot hold its values");
    rows.push_back(&spec);
  }
  return rows;
}

const std::vector<const OptionSpec*>& bindings() {
  static const std::vector<const OptionSpec*> all = build_bindings();
  return all;
}

// No two options share a field (checked on the first settings read).
void check_fields_apart(const Settings& settings) {
  std::set<const void*> fields;
  for (const OptionSpec* spec : bindings()) {
    if (!fields.insert(spec->binding->field(settings)).second) {
      throw std::logic_error("settings: the field of " + spec->name + " is another option's too");
    }
  }
}

const OptionSpec& option_of_field(const Settings& settings, const void* field) {
  for (const OptionSpec* spec : bindings()) {
    if (spec->binding->field(settings) == field) return *spec;
  }
  throw std::logic_error("settings: an address that is no option's field of these settings");
}

}  // namespace

Settings::Settings(const Config& config) : config_(std::make_shared<const Config>(config)) {
  for (const OptionSpec* spec : bindings()) spec->binding->read(config_, *spec, *this);
  static const bool checked = (check_fields_apart(*this), true);
  (void)checked;
}

Settings Settings::with_chosen_at(const void* field, std::int64_t uniform,
                               const std::vector<std::int64_t>& per_device) const {
  const OptionSpec& spec = option_of_field(*this, field);
  const std::string& name = spec.name;
  if (!spec.allows_auto) throw std::logic_error("settings: " + name + " cannot be auto");
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

bool Settings::any_auto(int device_count) const {
  for (int device = 0; device <= device_count; ++device) {
    if (model.split.of(device).is_auto() || pipar.micro_batches.of(device).is_auto()) return true;
  }
  return false;
}

std::string Settings::name_of(const void* field, int device) const {
  const std::string& name = option_of_field(*this, field).name;
  if (device == 0) return name;
  return "device." + std::to_string(device) + name.substr(name.find('.'));
}

std::string Settings::said(const void* field, int device) const {
  return name_of(field, device) + " = " + config_->text(option_of_field(*this, field).name, device);
}

bool Settings::user_set(const void* field) const { return config_->user_set(option_of_field(*this, field).name); }

const void* Settings::field_of(const std::string& name) const {
  const OptionSpec* spec = find_option(name);
  if (spec == nullptr) throw std::logic_error("settings: no option " + name);
  return spec->binding->field(*this);
}

}  // namespace cmlbed
