#include "cmlbed/config/option_rows.hpp"

#include <utility>

namespace cmlbed::rows {

OptionSpec option(BoundName name, OptionType type, std::string default_value, std::string unit, std::string help) {
  OptionSpec spec;
  spec.name = std::move(name.name);
  spec.binding = std::move(name.binding);
  spec.type = type;
  spec.default_value = std::move(default_value);
  spec.unit = std::move(unit);
  spec.help = std::move(help);
  return spec;
}

OptionSpec bounded(OptionSpec spec, double min, double max) {
  spec.min = min;
  spec.max = max;
  return spec;
}

OptionSpec choice(BoundName name, std::string default_value, std::vector<std::string> choices, std::string help) {
  OptionSpec spec = option(std::move(name), OptionType::choice, std::move(default_value), "word", std::move(help));
  spec.choices = std::move(choices);
  return spec;
}

OptionSpec autoable(OptionSpec spec) {
  spec.allows_auto = true;
  return spec;
}

OptionSpec with_word(OptionSpec spec, std::string word) {
  spec.word = std::move(word);
  return spec;
}

OptionSpec per_device(OptionSpec spec) {
  spec.per_device = true;
  return spec;
}

OptionSpec drawn_per_device(OptionSpec spec) {
  spec.per_device = true;
  spec.allows_distribution = true;
  spec.help += "; per device also uniform(LOW,HIGH) or lognormal(MEDIAN,SIGMA), drawn per device "
               "from experiment.seed (docs/how-to/heterogeneous-devices.md)";
  return spec;
}

OptionSpec changeable_on_resume(OptionSpec spec) {
  spec.resume_may_change = true;
  return spec;
}

OptionSpec existed_later(OptionSpec spec, std::string value_then) {
  spec.value_before_it_existed = std::move(value_then);
  return spec;
}

}  // namespace cmlbed::rows
