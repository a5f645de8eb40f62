#pragma once
// The resolved configuration of one run: every option of the option table with its
// value from (in rising precedence) the default, the INI file and the command line,
// plus per-device overrides from [device.K] sections or --device.K.key=value.
// Every value has been checked against its type and range when a Config exists.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cmlbed/base/image_shape.hpp"

namespace boost::program_options {
class options_description;
}

namespace cmlbed {

// One "name = value" as the user wrote it, and where (file path or "command line").
struct RawSetting {
  std::string name;
  std::string value;
  std::string origin;
};

class Config {
 public:
  // Resolves and type-checks; throws ConfigError naming option, value and what is allowed.
  static Config resolve(const std::vector<RawSetting>& file_settings,
                        const std::vector<RawSetting>& command_line_settings);
  static Config defaults() { return resolve({}, {}); }
  // This configuration with `settings` set on top of it (each checked as resolve checks
  // it; a later one wins).
  Config with_settings(const std::vector<RawSetting>& settings) const;

  // Typed values. `device` (1..N) selects a device's override of a per-device option;
  // 0 means the value for all devices.
  const std::string& text(const std::string& name, int device = 0) const;
  std::int64_t integer(const std::string& name, int device = 0) const;
  double real(const std::string& name, int device = 0) const;
  bool flag(const std::string& name) const;
  std::uint64_t size(const std::string& name, int device = 0) const;
  std::optional<double> rate_bits_per_second(const std::string& name, int device = 0) const;
  // Empty (the default) = not set: nullopt.
  std::optional<double> compute_rate_flops(const std::string& name, int device = 0) const;
  std::int64_t duration_ns(const std::string& name, int device = 0) const;
  ImageShape shape(const std::string& name) const;

  // Devices that have at least one override, and their overrides (option name -> value).
  const std::map<int, std::map<std::string, std::string>>& device_overrides() const {
    return device_values_;
  }
  // True when the user set the option (file or command line), globally or for a device.
  bool user_set(const std::string& name) const;

  // The full resolved configuration as INI text, for results files and --dry-run.
  std::string to_ini() const;

 private:
  // Checks one setting and sets it (ConfigError naming it when it is not valid).
  void apply(const RawSetting& setting);
  // Device `device`'s draw when the option's value is a distribution (clamped to the
  // option's range), else nullopt.
  std::optional<double> drawn(const std::string& name, int device) const;

  std::map<std::string, std::string> values_;
  std::map<int, std::map<std::string, std::string>> device_values_;
  std::map<std::string, std::string> user_set_;  // name -> origin
};

// Reads "section.key = value" settings from an INI file (Boost.Program_options syntax).
std::vector<RawSetting> read_ini_settings(const std::string& path);
// The same from INI text (e.g. the configuration a results file stores); `origin` names
// it in messages and in the settings' origin.
std::vector<RawSetting> parse_ini_settings(const std::string& text, const std::string& origin);

// Every option of the table as Boost.Program_options descriptions, one group per
// section, for --help and command-line parsing. Values are strings checked by Config.
boost::program_options::options_description config_options_description();

}  // namespace cmlbed
