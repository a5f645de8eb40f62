#pragma once
// The words a row of the option table is written in: option(CMLBED_FIELD(train, lr),
// OptionType::real, "0.01", "", "help") and the modifiers around it (bounded, choice,
// per_device, ...). The option table (option_table.cpp) and the methods' own options
// (MethodTraits::options, methods.cpp) are written with them.
#include <string>
#include <vector>

#include "cmlbed/config/option_binding.hpp"
#include "cmlbed/config/option_table.hpp"

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
