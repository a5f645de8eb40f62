#include "cmlbed/run/resume_rules.hpp"

#include "cmlbed/config/methods.hpp"

namespace cmlbed::run {

sim::RoundSequence round_sequence(const Settings& settings) {
  const MethodTraits& method = method_traits(settings.experiment.method);
  sim::RoundSequence s;
  s.averages = method.averages;
  s.aggregate_every = static_cast<int>(settings.train.aggregate_every);
  s.local_phase = method.local_phase;
  s.local_fraction = settings.adasplit.local_fraction;
  return s;
}

std::optional<std::string> changed_rounds_error(const Settings& stored, const Settings& settings, int done,
                                                const std::string& file) {
  const auto then_rounds = static_cast<int>(stored.experiment.rounds);
  const auto now_rounds = static_cast<int>(settings.experiment.rounds);
  const sim::RoundSequence s = round_sequence(settings);
  const sim::RoundRunOtherwise found = sim::first_round_run_otherwise(s, then_rounds, now_rounds, done);
  if (found.round < 0) return std::nullopt;
  const int round = found.round;
  const std::string then_text = std::to_string(then_rounds) + " rounds)";
  const std::string what =
      found.averaging
          ? (sim::averages_after(round, s.aggregate_every, then_rounds) ? "with" : "without") +
                std::string(" an average after it (train.aggregate_every = ") + std::to_string(s.aggregate_every) +
                ", the last of " + then_text
          : (round < sim::adasplit_local_rounds(s.local_fraction, then_rounds) ? "local" : "global") +
                std::string(" (adasplit.local_fraction of ") + then_text;
  return "cannot resume " + file + " with experiment.rounds = " + std::to_string(now_rounds) + ": its round " +
         std::to_string(round + 1) + " ran " + what + ", which a run of " + std::to_string(now_rounds) +
         " rounds would not; start a new run of " + std::to_string(now_rounds) + " rounds instead";
}

}  // namespace cmlbed::run
