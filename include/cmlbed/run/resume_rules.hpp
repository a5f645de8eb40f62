#pragma once
// What a resumed run (`cmlbed run --resume`) may change besides output.*: the number of
// rounds, as long as the rounds already done would have run the same with the new count.
#include <optional>
#include <string>

#include "cmlbed/config/settings.hpp"
#include "cmlbed/sim/round_rules.hpp"

namespace cmlbed::run {

// The parts of a configuration's round sequence that depend on experiment.rounds.
sim::RoundSequence round_sequence(const Settings& settings);

// Why `config` cannot continue, after `done` rounds, a run that `stored` configured
// (e.g. the first `stored` round count ended with an average that aggregate_every
// would not have made, or adasplit's local phase would end elsewhere); nothing when it
// can. `file` names the run in the message.
std::optional<std::string> changed_rounds_error(const Settings& stored, const Settings& settings, int done,
                                                const std::string& file);

}  // namespace cmlbed::run
