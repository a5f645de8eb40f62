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

void Timeline::count_paced(std::chrono::steady_clock::duration measured, std::chrono::nanoseconds paced_length) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++pace_.paced;
  if (measured <= paced_length) return;
  ++pace_.overran;
  pace_.overrun_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(measured - paced_length).count();
  if (paced_length.count() > 0) {
    pace_.worst_ratio = std::max(pace_.worst_ratio, std::chrono::duration<double>(measured).count() /
                                                        std::chrono::duration<double>(paced_length).count());
  }
}

}  // namespace cmlbed::trace
