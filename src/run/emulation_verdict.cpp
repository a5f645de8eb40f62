#include "cmlbed/run/emulation_verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <stdexcept>

namespace cmlbed::run {
namespace {

Emulation level_of(double value, double faithful, double broken) {
  if (!(value > faithful)) return Emulation::faithful;  // NaN: nothing measured
  return value > broken ? Emulation::broken : Emulation::degraded;
}

std::string rank_name(std::size_t rank) { return rank == 0 ? "server" : "device " + std::to_string(rank); }

std::string percent(double share) {
  char text[32];
  std::snprintf(text, sizeof text, share < 0.1 ? "%.2f%%" : "%.1f%%", 100 * share);
  return text;
}

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g s", s);
  return text;
}

// One failing rule: the ranks it failed on, worst first, and the worst's figures.
struct Finding {
  Emulation level = Emulation::faithful;
  double worst = -1;
  std::size_t worst_rank = 0;
  std::vector<std::size_t> ranks;
  void add(std::size_t rank, Emulation rank_level, double value) {
    if (rank_level == Emulation::faithful) return;
    ranks.push_back(rank);
    level = std::max(level, rank_level);
    if (value > worst) {
      worst = value;
      worst_rank = rank;
    }
  }
  std::string who() const {
    std::string names;
    for (std::size_t rank : ranks) names += (names.empty() ? "" : ", ") + rank_name(rank);
    return names;
  }
};

double value_at(const std::vector<double>& column, std::size_t rank) {
  return rank < column.size() && std::isfinite(column[rank]) ? column[rank] : 0.0;
}

// Every figure of RankFidelity once: its /rounds column, and how a run's rounds combine
// it. The table's order is the order the ranks gather their figures in (fidelity_values).
enum class Over { sum, largest, wall_weighted_mean };
struct FidelityField {
  double RankFidelity::*figure;
  std::vector<double> trace::RoundRecord::*column;
  Over over_rounds;
};
using R = trace::RoundRecord;
using F = RankFidelity;
constexpr FidelityField kFields[] = {
    {&F::paced_stages, &R::paced_stages, Over::sum},
    {&F::paced_overran, &R::paced_overran, Over::sum},
    {&F::paced_s, &R::paced_s, Over::sum},
    {&F::paced_overrun_s, &R::paced_overrun_s, Over::sum},
    {&F::paced_worst_ratio, &R::paced_worst_ratio, Over::largest},
    {&F::cpu_s, &R::cpu_s, Over::sum},
    {&F::runqueue_s, &R::runqueue_s, Over::sum},
    {&F::network_cpu_s, &R::network_cpu_s, Over::sum},
    {&F::network_runqueue_s, &R::network_runqueue_s, Over::sum},
    {&F::involuntary_switches, &R::involuntary_switches, Over::sum},
    {&F::host_steal, &R::host_steal, Over::wall_weighted_mean},
};
static_assert(std::size(kFields) == kFidelityValues);

}  // namespace

const char* emulation_name(Emulation level) {
  switch (level) {
    case Emulation::faithful:
      return "faithful";
    case Emulation::degraded:
      return "degraded";
    case Emulation::broken:
      return "broken";
  }
  return "unknown";
}

std::string EmulationVerdict::text() const {
  std::string out = emulation_name(level);
  for (std::size_t i = 0; i < reasons.size(); ++i) out += (i == 0 ? ": " : "; ") + reasons[i];
  return out;
}

EmulationVerdict judge_emulation(const std::vector<RankFidelity>& ranks, double wall_s, const std::string& placement,
                                 const FidelityLimits& limits) {
  Finding overrun, runqueue;
  double steal = 0;
  for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
    const RankFidelity& r = ranks[rank];
    steal = std::max(steal, r.host_steal);
    if (r.paced_s > 0) {
      const double share = r.paced_overrun_s / r.paced_s;
      overrun.add(rank, level_of(share, limits.overrun_faithful, limits.overrun_broken), share);
    } else if (wall_s > 0) {
      const double share = r.runqueue_s / wall_s;
      runqueue.add(rank, level_of(share, limits.runqueue_faithful, limits.runqueue_broken), share);
    }
  }
  EmulationVerdict verdict;
  // Reasons worst rule first; within a rule, the worst rank's figures.
  std::vector<std::pair<Emulation, std::string>> reasons;
  if (overrun.level != Emulation::faithful) {
    const RankFidelity& w = ranks[overrun.worst_rank];
    char worst[64];
    std::snprintf(worst, sizeof worst, "%.1fx", w.paced_worst_ratio);
    reasons.emplace_back(overrun.level,
                         "held stages ran past their lengths on " + overrun.who() + " (" + rank_name(overrun.worst_rank) +
                             ": " + seconds(w.paced_overrun_s) + " past " + seconds(w.paced_s) + " held, " +
                             percent(overrun.worst) + ", in " + std::to_string(static_cast<long long>(w.paced_overran)) +
                             " of " + std::to_string(static_cast<long long>(w.paced_stages)) + " stages, worst " +
                             worst + "; over " + percent(limits.overrun_faithful) + " is not faithful, over " +
                             percent(limits.overrun_broken) + " broken): this host was too slow or too busy for the "
                             "emulated devices");
  }
  if (runqueue.level != Emulation::faithful) {
    const RankFidelity& w = ranks[runqueue.worst_rank];
    reasons.emplace_back(runqueue.level,
                         runqueue.who() + " waited for a core (" + rank_name(runqueue.worst_rank) + ": " +
                             seconds(w.runqueue_s) + " in the run queue, " + percent(runqueue.worst) +
                             " of the wall time; over " + percent(limits.runqueue_faithful) +
                             " is not faithful, over " + percent(limits.runqueue_broken) + " broken)" +
                             (placement.empty() ? "" : ": " + placement));
  }
  if (const Emulation level = level_of(steal, limits.steal_faithful, limits.steal_broken); level != Emulation::faithful) {
    reasons.emplace_back(level, "the hypervisor stole " + percent(steal) + " of the host's CPU time");
  }
  std::stable_sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [level, reason] : reasons) {
    verdict.level = std::max(verdict.level, level);
    verdict.reasons.push_back(std::move(reason));
  }
  return verdict;
}

std::vector<RankFidelity> fidelity_of(const trace::RoundRecord& round) {
  const std::size_t ranks = round.cpu_s.size();
  std::vector<RankFidelity> out(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    for (const FidelityField& field : kFields) out[r].*field.figure = value_at(round.*field.column, r);
  }
  return out;
}

std::vector<RankFidelity> fidelity_of(const std::vector<trace::RoundRecord>& rounds, double& wall_s) {
  std::vector<RankFidelity> total;
  wall_s = 0;
  for (const trace::RoundRecord& round : rounds) {
    const std::vector<RankFidelity> one = fidelity_of(round);
    if (one.empty()) continue;  // not measured (a simulated round)
    wall_s += round.wall_s;
    total.resize(std::max(total.size(), one.size()));
    for (std::size_t r = 0; r < one.size(); ++r) {
      for (const FidelityField& field : kFields) {
        double& t = total[r].*field.figure;
        const double o = one[r].*field.figure;
        switch (field.over_rounds) {
          case Over::sum:
            t += o;
            break;
          case Over::largest:
            t = std::max(t, o);
            break;
          case Over::wall_weighted_mean:
            t += o * round.wall_s;  // divided by the wall time below
            break;
        }
      }
    }
  }
  if (wall_s > 0) {
    for (RankFidelity& t : total) {
      for (const FidelityField& field : kFields) {
        if (field.over_rounds == Over::wall_weighted_mean) t.*field.figure /= wall_s;
      }
    }
  }
  return total;
}

std::vector<double> fidelity_values(const RankFidelity& f) {
  std::vector<double> values;
  for (const FidelityField& field : kFields) values.push_back(f.*field.figure);
  return values;
}

RankFidelity fidelity_from_values(const std::vector<double>& v, std::size_t first) {
  if (v.size() < first + kFidelityValues) {
    throw std::invalid_argument("fidelity figures: a rank sent " + std::to_string(v.size()) + " values, expected " +
                                std::to_string(first + kFidelityValues));
  }
  RankFidelity f;
  for (std::size_t i = 0; i < kFidelityValues; ++i) f.*kFields[i].figure = v[first + i];
  return f;
}

void record_fidelity(trace::RoundRecord& round, const std::vector<RankFidelity>& ranks, const std::string& placement) {
  for (const FidelityField& field : kFields) {
    std::vector<double>& column = round.*field.column;
    column.clear();
    for (const RankFidelity& f : ranks) column.push_back(f.*field.figure);
  }
  round.emulation = static_cast<std::int32_t>(judge_emulation(ranks, round.wall_s, placement).level);
}

EmulationVerdict run_emulation_verdict(const std::vector<trace::RoundRecord>& rounds, const std::string& placement) {
  double wall_s = 0;
  const std::vector<RankFidelity> totals = fidelity_of(rounds, wall_s);
  return judge_emulation(totals, wall_s, placement);
}

void write_emulation_verdict(trace::ResultsFile& results, const std::vector<trace::RoundRecord>& rounds,
                             const std::string& placement) {
  const EmulationVerdict verdict = run_emulation_verdict(rounds, placement);
  std::string reasons;
  for (const std::string& reason : verdict.reasons) reasons += (reasons.empty() ? "" : "\n") + reason;
  results.set_root_text("emulation", emulation_name(verdict.level));
  results.set_root_text("emulation_reasons", reasons);
}

}  // namespace cmlbed::run
