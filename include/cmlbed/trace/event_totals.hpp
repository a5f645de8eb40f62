#pragma once
// Events summed per rank, round, lane, kind and message: what a results file keeps instead
// of every event when there are too many to store (`cmlbed simulate --events totals`,
// docs/reference/results-format.md, "/event_totals"). The rounds table's busy and idle
// figures are computed from the events before they are summed, so they stay exact.
#include <cstdint>
#include <vector>

#include "cmlbed/trace/event.hpp"

namespace cmlbed::trace {

struct EventTotal {
  std::int32_t rank = 0;
  std::int32_t round = -1;
  Lane lane = Lane::compute;
  EventKind kind = EventKind::compute;
  MessageType message = MessageType::none;
  std::int64_t count = 0;   // events summed
  std::int64_t bytes = 0;   // their bytes
  double seconds = 0;       // their lengths (t_end_ns - t_start_ns) added up
};

// How a results file keeps events: every event (`all`) or their totals (`totals`).
enum class EventDetail : std::uint8_t { all, totals };

// Rank `rank`'s events summed, one row per (round, lane, kind, message) that occurs, in
// that order.
std::vector<EventTotal> event_totals(int rank, const std::vector<Event>& events);

}  // namespace cmlbed::trace
