#pragma once
// Whether a run's times are the emulated system's or this host's: a verdict per round and
// per run from what every rank measured (docs/explanation/fidelity.md gives the rules and
// the measurements behind the limits).
//
// - A rank whose compute stages are held to a length (paced by devices.flops, stretched by
//   devices.slowdown) is judged by how far its stages ran past those lengths, weighed in
//   time: the summed overrun against the summed held length.
// - A rank whose stages run at this host's speed (the server; a device with neither) is
//   judged by the time its compute threads waited in the kernel's run queue for a core,
//   against the rounds' wall time: CPU it asked for and did not get. The network thread's
//   waits are recorded but not judged: each delays one chunk by a wake-up, and the links'
//   deadlines are absolute, so they do not add up (docs/explanation/fidelity.md).
// - Steal (CPU the hypervisor gave another guest) on the host degrades every figure.
// The worst rank decides.
#include <cstdint>
#include <string>
#include <vector>

#include "cmlbed/base/fidelity_limits.hpp"
#include "cmlbed/trace/event.hpp"
#include "cmlbed/trace/results_file.hpp"

namespace cmlbed::run {

enum class Emulation : std::int32_t { faithful = 0, degraded = 1, broken = 2 };

// "faithful", "degraded", "broken".
const char* emulation_name(Emulation level);

using cmlbed::FidelityLimits;

// One rank's figures over an interval (a round, or the sum of a run's rounds).
struct RankFidelity {
  double paced_stages = 0, paced_overran = 0, paced_s = 0, paced_overrun_s = 0, paced_worst_ratio = 0;
  double cpu_s = 0, runqueue_s = 0;                  // the compute threads' (all but the network thread)
  double network_cpu_s = 0, network_runqueue_s = 0;  // the transport's thread's
  double involuntary_switches = 0;
  double host_steal = 0;  // share of the host's CPU time stolen (0..1)
};

struct EmulationVerdict {
  Emulation level = Emulation::faithful;
  std::vector<std::string> reasons;  // one per rule that failed, worst rank first
  std::string text() const;          // "degraded: reason; reason"
};

// ranks[r] is rank r's; wall_s the interval's wall time; `placement` ("localhost: 4 ranks
// on 2 cores (0-1)") is named in the reasons of ranks judged by their CPU.
EmulationVerdict judge_emulation(const std::vector<RankFidelity>& ranks, double wall_s,
                                 const std::string& placement = "", const FidelityLimits& limits = {});

// The figures of the /rounds row (the columns paced_stages .. network_runqueue_s), per rank.
std::vector<RankFidelity> fidelity_of(const trace::RoundRecord& round);
// Summed over rounds (worst ratio: the largest; steal: the mean weighted by the rounds'
// wall times); the rows' wall times summed.
std::vector<RankFidelity> fidelity_of(const std::vector<trace::RoundRecord>& rounds, double& wall_s);

// A rank's measured figures for a /rounds row: the order gather and fidelity_of agree on.
std::vector<double> fidelity_values(const RankFidelity& figures);
RankFidelity fidelity_from_values(const std::vector<double>& values, std::size_t first);
constexpr std::size_t kFidelityValues = 11;

// Fills the row's per-rank fidelity columns and its `emulation` verdict.
void record_fidelity(trace::RoundRecord& round, const std::vector<RankFidelity>& ranks, const std::string& placement);

// The run's verdict over its rounds so far (each rank's figures summed over them).
EmulationVerdict run_emulation_verdict(const std::vector<trace::RoundRecord>& rounds, const std::string& placement);

// Root attributes `emulation` (the level's name) and `emulation_reasons` (one per line,
// empty when faithful), replacing earlier ones: written after every round, so a run
// that stops keeps the verdict of the rounds it finished.
void write_emulation_verdict(trace::ResultsFile& results, const std::vector<trace::RoundRecord>& rounds,
                             const std::string& placement);

}  // namespace cmlbed::run
