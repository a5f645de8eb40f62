#include "cmlbed/trace/timeline.hpp"

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

}  // namespace cmlbed::trace
