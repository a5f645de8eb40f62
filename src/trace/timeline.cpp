#include "cmlbed/trace/timeline.hpp"

#include <algorithm>

namespace cmlbed::trace {

Timeline::Timeline(std::int64_t offset_ns, std::size_t reserve_events)
    : offset_ns_(offset_ns), reserve_(reserve_events) {
  events_.reserve(reserve_);
}

void Timeline::record(const Event& event) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(event);
}

std::vector<Event> Timeline::drain() {
  std::vector<Event> fresh;
  fresh.reserve(reserve_);
  std::lock_guard<std::mutex> lock(mutex_);
  fresh.swap(events_);
  return fresh;
}

void Timeline::drain_into(std::vector<Event>& out) {
  out.clear();
  if (out.capacity() < reserve_) out.reserve(reserve_);
  std::lock_guard<std::mutex> lock(mutex_);
  out.swap(events_);
}

Timeline::PaceStats Timeline::pace_stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pace_;
}

Timeline::PaceStats Timeline::take_interval_pace_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  const PaceStats interval = interval_pace_;
  interval_pace_ = PaceStats{};
  return interval;
}

namespace {
void count_into(Timeline::PaceStats& stats, std::chrono::nanoseconds measured, std::chrono::nanoseconds length) {
  ++stats.paced;
  stats.paced_ns += length.count();
  if (measured <= length) return;
  ++stats.overran;
  stats.overrun_ns += (measured - length).count();
  if (length.count() > 0) {
    stats.worst_ratio = std::max(stats.worst_ratio, std::chrono::duration<double>(measured).count() /
                                                        std::chrono::duration<double>(length).count());
  }
}
}  // namespace

void Timeline::count_paced(std::chrono::steady_clock::duration measured, std::chrono::nanoseconds paced_length) {
  const auto measured_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(measured);
  std::lock_guard<std::mutex> lock(mutex_);
  count_into(pace_, measured_ns, paced_length);
  count_into(interval_pace_, measured_ns, paced_length);
}

}  // namespace cmlbed::trace
