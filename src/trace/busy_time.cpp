#include "cmlbed/trace/busy_time.hpp"

#include <algorithm>

namespace cmlbed::trace {

double union_seconds(std::vector<std::pair<std::int64_t, std::int64_t>> intervals_ns) {
  std::sort(intervals_ns.begin(), intervals_ns.end());
  std::int64_t total_ns = 0;
  bool have_run = false;
  std::int64_t run_start = 0;  // the current run of overlapping intervals
  std::int64_t run_end = 0;
  for (const auto& [start, end] : intervals_ns) {
    if (end <= start) continue;
    if (have_run && start <= run_end) {
      run_end = std::max(run_end, end);
      continue;
    }
    if (have_run) total_ns += run_end - run_start;
    run_start = start;
    run_end = end;
    have_run = true;
  }
  if (have_run) total_ns += run_end - run_start;
  return static_cast<double>(total_ns) * 1e-9;
}

bool counts_as_busy(const Event& event) {
  return event.lane == Lane::compute && event.kind != EventKind::wait;
}

std::vector<double> busy_seconds_per_rank(const std::vector<std::vector<Event>>& events_per_rank,
                                          std::int64_t round_start_ns, std::int64_t round_end_ns) {
  std::vector<double> busy;
  busy.reserve(events_per_rank.size());
  std::vector<std::pair<std::int64_t, std::int64_t>> intervals;
  for (const std::vector<Event>& events : events_per_rank) {
    intervals.clear();
    for (const Event& event : events) {
      if (!counts_as_busy(event)) continue;
      // Clipping may leave an empty or reversed interval; union_seconds skips those.
      intervals.emplace_back(std::max(event.t_start_ns, round_start_ns),
                             std::min(event.t_end_ns, round_end_ns));
    }
    busy.push_back(union_seconds(intervals));
  }
  return busy;
}

}  // namespace cmlbed::trace
