#pragma once
// A run's start-up and memory figures: each rank's start-up by phase and its resident
// memory, taken at the start of round 1 and gathered by rank 0 after that round, into
// /process of the results file and one progress line (where start-up went on the
// CPU time of each phase; the memory of the server and of the devices).
#include <string>
#include <vector>

#include "cmlbed/trace/process_stats.hpp"
#include "cmlbed/trace/results_file.hpp"

namespace cmlbed::run {

// This rank's figures (call it at the start of round 1): the wall and the CPU seconds of
// each start-up phase (trace::StartupPhase order), the total, and `memory`'s VmRSS, VmHWM
// and Pss in bytes.
std::vector<double> startup_measures(const trace::MemoryUse& memory);

// Writes every rank's startup_measures() (index = rank) as /process/startup_<phase>_s,
// /process/startup_<phase>_cpu_s, /process/startup_s, /process/rss_at_round1_bytes,
// /process/peak_rss_at_round1_bytes and /process/pss_at_round1_bytes.
void write_startup(trace::ResultsFile& results, const std::vector<std::vector<double>>& per_rank);

// "start-up 12.3 s to round 1; CPU s per rank (median) 2.10: load 1.05, data 0.40, ...;
// resident at round 1: server 412 MB, devices median 180 MB (max 190 MB); Pss of all ranks
// 2.1 GB".
std::string startup_line(const std::vector<std::vector<double>>& per_rank);

}  // namespace cmlbed::run
