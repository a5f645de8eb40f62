#include "startup_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>

#include "cmlbed/trace/process_stats.hpp"
#include "cmlbed/trace/startup_clock.hpp"

namespace cmlbed::run {
namespace {

using trace::kStartupPhaseCount;
// The figures of a rank, in this order: wall seconds of each phase, CPU seconds of each
// phase, the total, VmRSS, VmHWM, Pss.
constexpr std::size_t kCpu = kStartupPhaseCount;
constexpr std::size_t kTotal = 2 * kStartupPhaseCount;
constexpr std::size_t kRss = kTotal + 1;
constexpr std::size_t kPeakRss = kTotal + 2;
constexpr std::size_t kPss = kTotal + 3;
constexpr std::size_t kMeasures = kTotal + 4;

std::vector<double> column(const std::vector<std::vector<double>>& per_rank, std::size_t index) {
  std::vector<double> values;
  for (const auto& rank : per_rank) {
    if (rank.size() != kMeasures) {
      throw std::invalid_argument("start-up figures: a rank sent " + std::to_string(rank.size()) +
                                  " values, expected " + std::to_string(kMeasures));
    }
    values.push_back(rank[index]);
  }
  return values;
}

double median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

}  // namespace

std::vector<double> startup_measures(const trace::MemoryUse& memory) {
  const trace::StartupClock& clock = trace::startup_clock();
  std::vector<double> measures = clock.phase_seconds();
  for (const double cpu : clock.phase_cpu_seconds()) measures.push_back(cpu);
  measures.push_back(clock.total_seconds());
  for (const std::int64_t bytes : {memory.rss_bytes, memory.peak_rss_bytes, memory.pss_bytes}) {
    measures.push_back(bytes < 0 ? std::nan("") : static_cast<double>(bytes));
  }
  return measures;
}

void write_startup(trace::ResultsFile& results, const std::vector<std::vector<double>>& per_rank) {
  for (std::size_t phase = 0; phase < kStartupPhaseCount; ++phase) {
    const std::string name =
        std::string("startup_") + trace::startup_phase_name(static_cast<trace::StartupPhase>(phase));
    results.write_process_measure(name + "_s", column(per_rank, phase));
    results.write_process_measure(name + "_cpu_s", column(per_rank, kCpu + phase));
  }
  results.write_process_measure("startup_s", column(per_rank, kTotal));
  results.write_process_measure("rss_at_round1_bytes", column(per_rank, kRss));
  results.write_process_measure("peak_rss_at_round1_bytes", column(per_rank, kPeakRss));
  results.write_process_measure("pss_at_round1_bytes", column(per_rank, kPss));
}

std::string startup_line(const std::vector<std::vector<double>>& per_rank) {
  const std::vector<double> totals = column(per_rank, kTotal);
  // Wall time per phase says little when ranks share cores; the median rank's CPU time
  // per phase says what each costs. Longest first, those over 5% of the CPU time.
  std::vector<double> cpu(kStartupPhaseCount);
  for (std::size_t phase = 0; phase < kStartupPhaseCount; ++phase) {
    cpu[phase] = median(column(per_rank, kCpu + phase));
  }
  const double cpu_total = std::accumulate(cpu.begin(), cpu.end(), 0.0);
  std::vector<std::size_t> phases(kStartupPhaseCount);
  std::iota(phases.begin(), phases.end(), std::size_t{0});
  std::stable_sort(phases.begin(), phases.end(), [&](std::size_t a, std::size_t b) { return cpu[a] > cpu[b]; });
  std::string parts;
  for (const std::size_t phase : phases) {
    if (cpu[phase] < 0.05 * cpu_total) break;
    parts += (parts.empty() ? "" : ", ") +
             std::string(trace::startup_phase_name(static_cast<trace::StartupPhase>(phase))) +
             format(" %.2f", cpu[phase]);
  }
  std::string line = format("start-up %.1f s to round 1", *std::max_element(totals.begin(), totals.end())) +
                     format("; CPU s per rank (median) %.2f: ", cpu_total) + parts +
                     format("; resident at round 1: server %.0f MB", column(per_rank, kRss)[0] / 1e6);
  std::vector<double> devices = column(per_rank, kRss);
  devices.erase(devices.begin());
  if (!devices.empty()) {
    line += format(", devices median %.0f MB", median(devices) / 1e6) +
            format(" (max %.0f MB)", *std::max_element(devices.begin(), devices.end()) / 1e6);
  }
  const std::vector<double> pss = column(per_rank, kPss);
  return line + format("; Pss of all ranks %.2f GB", std::accumulate(pss.begin(), pss.end(), 0.0) / 1e9);
}

}  // namespace cmlbed::run
