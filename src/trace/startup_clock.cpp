#include "cmlbed/trace/startup_clock.hpp"

#include <algorithm>

#include "cmlbed/trace/process_stats.hpp"

namespace cmlbed::trace {

const char* startup_phase_name(StartupPhase phase) {
  static constexpr std::array<const char*, kStartupPhaseCount> kNames = {
      "load", "mpi_init", "config", "libtorch", "data", "model", "clocks", "results_file", "transport"};
  return kNames.at(static_cast<std::size_t>(phase));
}

StartupClock::StartupClock() : start_ns_(process_start_ns().value_or(boottime_now_ns())) {}

void StartupClock::end(StartupPhase phase) {
  const auto index = static_cast<std::size_t>(phase);
  // A skipped phase ends where the one before it ended: it took no time.
  std::int64_t previous = start_ns_, previous_cpu = start_cpu_ns_;
  for (std::size_t earlier = 0; earlier < index; ++earlier) {
    if (end_ns_[earlier] == 0) {
      end_ns_[earlier] = previous;
      end_cpu_ns_[earlier] = previous_cpu;
    }
    previous = end_ns_[earlier];
    previous_cpu = end_cpu_ns_[earlier];
  }
  end_ns_[index] = boottime_now_ns();
  end_cpu_ns_[index] = process_cpu_ns();
}

void StartupClock::restart() {
  start_ns_ = boottime_now_ns();
  start_cpu_ns_ = process_cpu_ns();
  end_ns_.fill(0);
  end_cpu_ns_.fill(0);
}

std::vector<double> StartupClock::phase_seconds() const {
  std::vector<double> seconds;
  std::int64_t previous = start_ns_;
  for (const std::int64_t end : end_ns_) {
    if (end == 0) {
      seconds.push_back(0.0);
      continue;
    }
    seconds.push_back(static_cast<double>(std::max<std::int64_t>(0, end - previous)) * 1e-9);
    previous = std::max(previous, end);
  }
  return seconds;
}

std::vector<double> StartupClock::phase_cpu_seconds() const {
  std::vector<double> seconds;
  std::int64_t previous = start_cpu_ns_;  // the CPU clock starts with the process
  for (std::size_t phase = 0; phase < kStartupPhaseCount; ++phase) {
    if (end_ns_[phase] == 0) {
      seconds.push_back(0.0);
      continue;
    }
    seconds.push_back(static_cast<double>(std::max<std::int64_t>(0, end_cpu_ns_[phase] - previous)) * 1e-9);
    previous = std::max(previous, end_cpu_ns_[phase]);
  }
  return seconds;
}

double StartupClock::total_seconds() const {
  const std::int64_t last = *std::max_element(end_ns_.begin(), end_ns_.end());
  return last == 0 ? 0.0 : static_cast<double>(last - start_ns_) * 1e-9;
}

StartupClock& startup_clock() {
  static StartupClock clock;
  return clock;
}

}  // namespace cmlbed::trace
