#include "cmlbed/train/resume_rules.hpp"

namespace cmlbed::train {

plan::RoundSequence round_sequence(const Config& config) {
  const std::string& method = config.text("experiment.method");
  plan::RoundSequence s;
  s.averages = method == "fl" || method == "sfl" || method == "pipar";
  s.aggregate_every = static_cast<int>(config.integer("train.aggregate_every"));
  s.local_phase = method == "adasplit";
  s.local_fraction = config.real("adasplit.local_fraction");
  return s;
}

std::optional<std::string> changed_rounds_error(const Config& stored, const Config& config, int done,
                                                const std::string& file) {
  const auto then_rounds = static_cast<int>(stored.integer("experiment.rounds"));
  const auto now_rounds = static_cast<int>(config.integer("experiment.rounds"));
  const plan::RoundSequence s = round_sequence(config);
  const int round = plan::first_round_run_otherwise(s, then_rounds, now_rounds, done);
  if (round < 0) return std::nullopt;
  const bool averaged = s.averages && plan::averages_after(round, s.aggregate_every, then_rounds);
  const std::string what =
      s.local_phase && !(s.averages && averaged != plan::averages_after(round, s.aggregate_every, now_rounds))
          ? (round < plan::adasplit_local_rounds(s.local_fraction, then_rounds) ? "local" : "global") +
                std::string(" (adasplit.local_fraction of ") + std::to_string(then_rounds) + " rounds)"
          : (averaged ? "with" : "without") + std::string(" an average after it (train.aggregate_every = ") +
                std::to_string(s.aggregate_every) + ", the last of " + std::to_string(then_rounds) + " rounds)";
  return "cannot resume " + file + " with experiment.rounds = " + std::to_string(now_rounds) + ": its round " +
         std::to_string(round + 1) + " ran " + what + ", which a run of " + std::to_string(now_rounds) +
         " rounds would not; start a new run of " + std::to_string(now_rounds) + " rounds instead";
}

}  // namespace cmlbed::train
