#include "cmlbed/trace/event_totals.hpp"

#include <map>
#include <tuple>

namespace cmlbed::trace {

std::vector<EventTotal> event_totals(int rank, const std::vector<Event>& events) {
  using Key = std::tuple<std::int32_t, Lane, EventKind, MessageType>;
  std::map<Key, EventTotal> sums;
  for (const Event& event : events) {
    EventTotal& total = sums[{event.round, event.lane, event.kind, event.message}];
    total.count += 1;
    total.bytes += event.bytes;
    total.seconds += static_cast<double>(event.t_end_ns - event.t_start_ns) * 1e-9;
  }
  std::vector<EventTotal> rows;
  rows.reserve(sums.size());
  for (auto& [key, total] : sums) {
    std::tie(total.round, total.lane, total.kind, total.message) = key;
    total.rank = rank;
    rows.push_back(total);
  }
  return rows;
}

}  // namespace cmlbed::trace
