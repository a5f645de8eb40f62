#pragma once
// The single list of configuration options: name, type, default, unit, help and the
// settings field that holds it. Everything else (INI parsing, --help, validation of
// values, the resolved INI text in results files, Settings) is driven by this table, so
// adding an option is one row (option_table.cpp, or a method's own options in its row of
// the method table, methods.cpp) and its field (settings.hpp).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cmlbed {

struct OptionBinding;  // option_rows.hpp

enum class OptionType { integer, real, text, flag, choice, size, rate, compute_rate, duration, shape, path };

struct OptionSpec {
  std::string name;           // "section.key"
  OptionType type;
  std::string default_value;  // as the user would write it; "" = not set
  std::string unit;           // shown in --help
  std::string help;
  std::vector<std::string> choices;  // allowed words for OptionType::choice
  double min = -1e300;               // inclusive bounds for integer / real / size
  double max = 1e300;
  bool per_device = false;  // may be overridden for one device in a [device.K] section
  bool allows_auto = false; // may be "auto": chosen by the planner before the run (model.split, pipar.micro_batches)
  std::string word;         // a word accepted besides the type's values, which the program resolves
                            // ("placement" for plan.host_cores); "" = none
  bool allows_distribution = false;  // per device: may be uniform(A,B) / lognormal(M,S) (config/distribution.hpp)
  // A resumed run may set it to another value than its results file stores: it changes
  // neither the run's mathematics nor its file (experiment.rounds only where the rounds
  // done so far would have run the same: run/resume_rules.hpp).
  bool resume_may_change = false;
  // The value runs had before the option existed, where it is not its default: a results
  // file written then stores no value for it, and a resumed run takes this one.
  std::string value_before_it_existed;
  // The settings field that holds it (CMLBED_FIELD, option_rows.hpp).
  std::shared_ptr<const OptionBinding> binding;

  std::string section() const { return name.substr(0, name.find('.')); }
  std::string key() const { return name.substr(name.find('.') + 1); }
};

// Every option: the run's sections, then each method's own (MethodTraits::options, in
// the method table's order), then the links', devices', privacy's and output's.
const std::vector<OptionSpec>& option_table();

// nullptr when no option has that name.
const OptionSpec* find_option(std::string_view name);

// The values the option accepts, in words: "an integer in [1, 64] or auto", "one of fl,
// sl, ...", "true or false", or the unit for sizes, rates and durations. Error messages and
// the option reference (option_reference.hpp) both say it this way.
std::string allowed_values(const OptionSpec& spec);

// The per-device option whose key (the part after the section) is `key`, or nullptr.
const OptionSpec* find_per_device_option(std::string_view key);

}  // namespace cmlbed
