#pragma once
// How the devices' paced compute stages (devices.flops) kept their lengths: gathered from
// every rank at the end of a run, into /process of the results file and one line after
// the summary. A stage overruns when the real work takes longer than FLOPs / rate, i.e.
// this machine was too slow or too busy for the configured rate; the round times of
// such a run depend on the machine again, by as much as the overrun.
#include <string>
#include <vector>

#include "cmlbed/trace/results_file.hpp"

namespace cmlbed::run {

struct PacedStages {
  // Index = rank.
  std::vector<double> paced;        // stages paced
  std::vector<double> overran;      // of which the work outlasted the paced length
  std::vector<double> overrun_s;    // summed excess, seconds
  std::vector<double> worst_ratio;  // largest measured / paced length (0: none overran)
  bool any() const;                 // some rank paced a stage
};

// From every rank's figures (index = rank), whose entries [first, first + 4) are
// Timeline::PaceStats' paced, overran, overrun (seconds) and worst_ratio.
PacedStages paced_stages(const std::vector<std::vector<double>>& per_rank, std::size_t first);

// /process/paced_stages, paced_overran, paced_overrun_s and paced_worst_ratio.
void write_paced_stages(trace::ResultsFile& results, const PacedStages& paced);

// "devices.flops: all 120 paced stages kept their length" or "devices.flops: 7 of 120
// paced stages ran long (this machine was too slow or too busy for the rate), by 0.42 s
// in all, at worst 1.8x their length (devices 2, 3)".
std::string paced_line(const PacedStages& paced);

}  // namespace cmlbed::run
