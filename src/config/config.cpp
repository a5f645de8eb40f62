#include "cmlbed/config/config.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "cmlbed/base/parse_integer.hpp"
#include "cmlbed/base/units.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/distribution.hpp"
#include "cmlbed/config/option_table.hpp"

namespace po = boost::program_options;

namespace cmlbed {

namespace {

std::string on_one_line(const std::string& text) {
  std::string line;
  for (const char c : text) {
    line += c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : std::string(1, c);
  }
  return line;
}

}  // namespace

ConfigError::ConfigError(const std::string& message)
    : std::runtime_error(on_one_line(message)) {}

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string suggestion_for(const std::string& name) {
  std::string best;
  std::size_t best_distance = 4;  // only suggest near misses
  for (const OptionSpec& spec : option_table()) {
    const std::size_t d = edit_distance(name, spec.name);
    if (d < best_distance) {
      best_distance = d;
      best = spec.name;
    }
  }
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

[[noreturn]] void fail_value(const OptionSpec& spec, const std::string& shown_name,
                             const std::string& value, const std::string& origin,
                             const std::string& why) {
  throw ConfigError("option '" + shown_name + "' (" + origin + "): '" + value + "' " + why +
                    "; allowed: " + allowed_values(spec));
}

std::optional<bool> parse_flag(const std::string& value) {
  if (value == "true" || value == "yes" || value == "on" || value == "1") return true;
  if (value == "false" || value == "no" || value == "off" || value == "0") return false;
  return std::nullopt;
}

// A value the resolved configuration's INI text (Config::to_ini, stored in the results
// file and read back by a resumed run) could not hold as it is: INI comments start at '#',
// a line break ends the value, and white space around it is trimmed when read.
void check_storable(const std::string& shown_name, const std::string& value,
                    const std::string& origin) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t'; };
  if (value.find_first_of("#\r\n") != std::string::npos ||
      (!value.empty() && (is_space(value.front()) || is_space(value.back())))) {
    throw ConfigError("option '" + shown_name + "' (" + origin + "): '" + value +
                      "' cannot be stored in the results file's INI text; allowed: a value "
                      "without '#' or line breaks that neither starts nor ends with white space");
  }
}

// Reads one value of a drawn option (a distribution's bound, in the option's units).
double parse_drawn_value(const OptionSpec& spec, const std::string& text) {
  if (spec.type == OptionType::rate) return parse_rate_bits_per_second(text);
  if (spec.type == OptionType::compute_rate) return parse_compute_rate_flops(text);
  const std::optional<double> number = parse_real(text);
  if (!number) throw std::invalid_argument("'" + text + "' is not a number");
  return *number;
}

std::optional<Distribution> distribution_of(const OptionSpec& spec, const std::string& value) {
  if (!spec.allows_distribution) return std::nullopt;
  return parse_distribution(value, [&](const std::string& text) { return parse_drawn_value(spec, text); });
}

// Checks a value against its option's type and range (throws ConfigError).
void check_value(const OptionSpec& spec, const std::string& shown_name, const std::string& value,
                 const std::string& origin) {
  check_storable(shown_name, value, origin);
  if (spec.allows_auto && value == "auto") return;
  if (!spec.word.empty() && value == spec.word) return;
  const auto check_range = [&](double number) {
    if (number < spec.min || number > spec.max) {
      fail_value(spec, shown_name, value, origin, "is out of range");
    }
  };
  try {
    if (const std::optional<Distribution> distribution = distribution_of(spec, value)) {
      check_range(distribution->first);
      if (distribution->kind == Distribution::Kind::uniform) check_range(distribution->second);
      return;
    }
  } catch (const std::invalid_argument& e) {
    throw ConfigError("option '" + shown_name + "' (" + origin + "): " + e.what());
  }
  switch (spec.type) {
    case OptionType::integer: {
      const std::optional<long long> number = parse_integer(value);
      if (!number) fail_value(spec, shown_name, value, origin, "is not an integer");
      check_range(static_cast<double>(*number));
      return;
    }
    case OptionType::real: {
      const std::optional<double> number = parse_real(value);
      if (!number) fail_value(spec, shown_name, value, origin, "is not a number");
      check_range(*number);
      return;
    }
    case OptionType::flag:
      if (!parse_flag(value)) fail_value(spec, shown_name, value, origin, "is not a flag");
      return;
    case OptionType::choice:
      if (std::find(spec.choices.begin(), spec.choices.end(), value) == spec.choices.end()) {
        fail_value(spec, shown_name, value, origin, "is not a known choice");
      }
      return;
    case OptionType::text:
    case OptionType::path:
      return;
    case OptionType::size:
    case OptionType::rate:
    case OptionType::compute_rate:
    case OptionType::duration:
    case OptionType::shape:
      // An empty rate: an unshaped link; an empty compute rate: this machine's speed.
      if (value.empty() && (spec.type == OptionType::rate || spec.type == OptionType::compute_rate)) return;
      try {
        if (spec.type == OptionType::size) check_range(static_cast<double>(parse_size_bytes(value)));
        if (spec.type == OptionType::rate) parse_rate_bits_per_second(value);
        if (spec.type == OptionType::compute_rate) parse_compute_rate_flops(value);
        if (spec.type == OptionType::duration) parse_duration_ns(value);
        if (spec.type == OptionType::shape) parse_image_shape(value);
      } catch (const std::invalid_argument& e) {
        throw ConfigError("option '" + shown_name + "' (" + origin + "): " + e.what());
      }
      return;
  }
}

// "device.3.slowdown" -> (3, option devices.slowdown); throws ConfigError otherwise.
std::pair<int, const OptionSpec*> parse_device_setting(const RawSetting& setting) {
  const std::string& name = setting.name;
  const std::size_t dot = name.find('.', 7);
  const std::string number = dot == std::string::npos ? "" : name.substr(7, dot - 7);
  const bool numeric = !number.empty() && number.size() < 7 &&
                       std::all_of(number.begin(), number.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
  if (!numeric || std::stoi(number) < 1) {
    throw ConfigError("option '" + name + "' (" + setting.origin +
                      "): device sections are named device.K with K = 1, 2, ... (the MPI rank "
                      "of the device)");
  }
  const std::string key = name.substr(dot + 1);
  const OptionSpec* spec = find_per_device_option(key);
  if (spec == nullptr) {
    std::string keys;
    for (const OptionSpec& s : option_table()) {
      if (s.per_device) keys += (keys.empty() ? "" : ", ") + s.key();
    }
    throw ConfigError("option '" + name + "' (" + setting.origin + "): '" + key +
                      "' cannot be set per device; per-device keys: " + keys);
  }
  return {std::stoi(number), spec};
}

const OptionSpec& spec_or_throw(const std::string& name) {
  const OptionSpec* spec = find_option(name);
  if (spec == nullptr) throw std::logic_error("cmlbed: no option named '" + name + "'");
  return *spec;
}

}  // namespace

void Config::apply(const RawSetting& setting) {
  if (setting.name.rfind("device.", 0) == 0) {
    const auto [device, spec] = parse_device_setting(setting);
    check_value(*spec, setting.name, setting.value, setting.origin);
    device_values_[device][spec->name] = setting.value;
    user_set_[spec->name] = setting.origin;
    return;
  }
  const OptionSpec* spec = find_option(setting.name);
  if (spec == nullptr) {
    throw ConfigError("unknown option '" + setting.name + "' (" + setting.origin + ")" +
                      suggestion_for(setting.name) + " (`cmlbed run --help` lists the options)");
  }
  check_value(*spec, setting.name, setting.value, setting.origin);
  values_[spec->name] = setting.value;
  user_set_[spec->name] = setting.origin;
}

Config Config::resolve(const std::vector<RawSetting>& file_settings,
                       const std::vector<RawSetting>& command_line_settings) {
  Config config;
  for (const OptionSpec& spec : option_table()) config.values_[spec.name] = spec.default_value;

  for (const auto* source : {&file_settings, &command_line_settings}) {
    std::map<std::string, std::string> seen_in_source;
    for (const RawSetting& setting : *source) {
      if (!seen_in_source.emplace(setting.name, setting.value).second) {
        throw ConfigError("option '" + setting.name + "' is given more than once (" +
                          setting.origin + ")");
      }
      config.apply(setting);
    }
  }
  return config;
}

Config Config::with_settings(const std::vector<RawSetting>& settings) const {
  Config config = *this;
  for (const RawSetting& setting : settings) config.apply(setting);
  return config;
}

const std::string& Config::text(const std::string& name, int device) const {
  const OptionSpec& spec = spec_or_throw(name);
  if (device > 0 && spec.per_device) {
    const auto overrides = device_values_.find(device);
    if (overrides != device_values_.end()) {
      const auto value = overrides->second.find(name);
      if (value != overrides->second.end()) return value->second;
    }
  }
  return values_.at(name);
}

std::int64_t Config::integer(const std::string& name, int device) const {
  const std::string& value = text(name, device);
  if (value == "auto") {
    throw std::logic_error(name + " = auto is chosen by the planner before the run (docs/explanation/simulator.md); "
                           "it has no value to read yet");
  }
  if (const std::string& word = spec_or_throw(name).word; !word.empty() && value == word) {
    throw std::logic_error(name + " = " + word + " is resolved by the program that reads it; it has no number");
  }
  return std::stoll(value);
}

std::optional<double> Config::drawn(const std::string& name, int device) const {
  const OptionSpec& spec = spec_or_throw(name);
  const std::optional<Distribution> distribution = distribution_of(spec, text(name, device));
  if (!distribution) return std::nullopt;
  const double value = draw(*distribution, std::stoull(values_.at("experiment.seed")), name, device);
  return std::clamp(value, spec.min, spec.max);
}

double Config::real(const std::string& name, int device) const {
  if (const std::optional<double> value = drawn(name, device)) return *value;
  return std::stod(text(name, device));
}

bool Config::flag(const std::string& name) const { return *parse_flag(text(name)); }

std::uint64_t Config::size(const std::string& name, int device) const {
  return parse_size_bytes(text(name, device));
}

std::optional<double> Config::rate_bits_per_second(const std::string& name, int device) const {
  const std::string& value = text(name, device);
  if (value.empty()) return std::nullopt;
  if (const std::optional<double> rate = drawn(name, device)) return rate;
  return parse_rate_bits_per_second(value);
}

std::optional<double> Config::compute_rate_flops(const std::string& name, int device) const {
  const std::string& value = text(name, device);
  if (value.empty()) return std::nullopt;
  if (const std::optional<double> rate = drawn(name, device)) return rate;
  return parse_compute_rate_flops(value);
}

std::int64_t Config::duration_ns(const std::string& name, int device) const {
  return parse_duration_ns(text(name, device));
}

ImageShape Config::shape(const std::string& name) const { return parse_image_shape(text(name)); }

bool Config::user_set(const std::string& name) const { return user_set_.count(name) > 0; }

std::string Config::to_ini() const {
  std::ostringstream out;
  std::string section;
  for (const OptionSpec& spec : option_table()) {
    if (spec.section() != section) {
      section = spec.section();
      out << (out.tellp() > 0 ? "\n" : "") << "[" << section << "]\n";
    }
    out << spec.key() << " = " << values_.at(spec.name) << "\n";
  }
  for (const auto& [device, overrides] : device_values_) {
    out << "\n[device." << device << "]\n";
    for (const auto& [name, value] : overrides) {
      out << spec_or_throw(name).key() << " = " << value << "\n";
    }
  }
  return out.str();
}

namespace {

// `origin` goes into each setting (messages about a value name it); `what` prefixes a
// syntax error.
std::vector<RawSetting> parse_ini_stream(std::istream& stream, const std::string& what,
                                         const std::string& origin) {
  po::options_description none;
  po::parsed_options parsed(nullptr);
  try {
    parsed = po::parse_config_file(stream, none, /*allow_unregistered=*/true);
  } catch (const po::error& e) {
    throw ConfigError(what + ": " + e.what());
  }
  std::vector<RawSetting> settings;
  for (const po::option& option : parsed.options) {
    settings.push_back({option.string_key, option.value.empty() ? "" : option.value.front(), origin});
  }
  return settings;
}

}  // namespace

std::vector<RawSetting> read_ini_settings(const std::string& path) {
  std::ifstream stream(path);
  if (!stream) throw ConfigError("cannot read config file '" + path + "'");
  return parse_ini_stream(stream, "config file '" + path + "'", path);
}

std::vector<RawSetting> parse_ini_settings(const std::string& text, const std::string& origin) {
  std::istringstream stream(text);
  return parse_ini_stream(stream, origin, origin);
}

po::options_description config_options_description() {
  po::options_description all("Configuration options (INI [section] key = value, or "
                              "--section.key=value on the command line; per-device: "
                              "[device.K] key = value or --device.K.key=value)");
  std::string section;
  std::unique_ptr<po::options_description> group;
  const auto flush = [&] {
    if (group) all.add(*group);
  };
  for (const OptionSpec& spec : option_table()) {
    if (spec.section() != section) {
      flush();
      section = spec.section();
      group = std::make_unique<po::options_description>("[" + section + "]");
    }
    std::string help = spec.help;
    help += " [" + (spec.unit.empty() ? std::string("number") : spec.unit);
    help += "; default: " + (spec.default_value.empty() ? std::string("unset")
                                                         : spec.default_value);
    if (spec.type == OptionType::choice) help += "; " + allowed_values(spec);
    if (spec.per_device) help += "; per device";
    help += "]";
    auto* value = po::value<std::string>()->value_name(spec.unit.empty() ? "X" : spec.unit);
    if (spec.type == OptionType::flag) value->implicit_value("true");
    group->add_options()(spec.name.c_str(), value, help.c_str());
  }
  flush();
  return all;
}

}  // namespace cmlbed
