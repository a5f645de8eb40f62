#include "fidelity_sampler.hpp"

#include <algorithm>

namespace cmlbed::run {

void FidelitySampler::start() {
  timeline_.take_interval_pace_stats();
  cpu_at_start_ = process_cpu_usage();
  host_at_start_ = host_ticks();
}

RankFidelity FidelitySampler::stop() {
  const trace::Timeline::PaceStats pace = timeline_.take_interval_pace_stats();
  const CpuUsage cpu = process_cpu_usage();
  const HostTicks host = host_ticks();
  RankFidelity f;
  f.paced_stages = static_cast<double>(pace.paced);
  f.paced_overran = static_cast<double>(pace.overran);
  f.paced_s = static_cast<double>(pace.paced_ns) * 1e-9;
  f.paced_overrun_s = static_cast<double>(pace.overrun_ns) * 1e-9;
  f.paced_worst_ratio = pace.worst_ratio;
  // A thread that ended in the round takes its counts with it: never below zero.
  f.cpu_s = static_cast<double>(std::max<std::int64_t>(0, cpu.cpu_ns - cpu_at_start_.cpu_ns)) * 1e-9;
  f.runqueue_s = static_cast<double>(std::max<std::int64_t>(0, cpu.runqueue_ns - cpu_at_start_.runqueue_ns)) * 1e-9;
  f.network_cpu_s = static_cast<double>(std::max<std::int64_t>(0, cpu.network_cpu_ns - cpu_at_start_.network_cpu_ns)) * 1e-9;
  f.network_runqueue_s =
      static_cast<double>(std::max<std::int64_t>(0, cpu.network_runqueue_ns - cpu_at_start_.network_runqueue_ns)) * 1e-9;
  f.involuntary_switches = static_cast<double>(cpu.involuntary_switches - cpu_at_start_.involuntary_switches);
  const std::int64_t total = host.total - host_at_start_.total;
  f.host_steal = total > 0 ? static_cast<double>(host.steal - host_at_start_.steal) / static_cast<double>(total) : 0.0;
  return f;
}

}  // namespace cmlbed::run
