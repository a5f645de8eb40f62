#pragma once
// Busy and idle time per rank and round, as the /rounds table records them.
//
// A rank is busy while its compute lane runs anything but a wait: forward, backward,
// step, aggregate, evaluate, compute and sleep (the emulated slowdown of a device
// counts, since the emulated device is occupied). Events on the uplink / downlink
// lanes (sends, receives) and events of kind wait do not count: a rank that only
// moves data or waits for it is idle. Overlapping events (e.g. nested scopes) count
// once, as the length of the union of their intervals. idle = round wall time - busy.
#include <cstdint>
#include <utility>
#include <vector>

#include "cmlbed/trace/event.hpp"

namespace cmlbed::trace {

// Total length in seconds of the union of [start, end) intervals in nanoseconds, given
// in any order, overlapping or not. Empty and reversed (end <= start) intervals add
// nothing.
double union_seconds(std::vector<std::pair<std::int64_t, std::int64_t>> intervals_ns);

// Whether an event counts towards its rank's busy time (see above).
bool counts_as_busy(const Event& event);

// For each rank: the union of its busy events' intervals clipped to
// [round_start_ns, round_end_ns), in seconds. Events of other rounds simply fall
// outside the window, so unfiltered event lists may be passed.
std::vector<double> busy_seconds_per_rank(const std::vector<std::vector<Event>>& events_per_rank,
                                          std::int64_t round_start_ns, std::int64_t round_end_ns);

}  // namespace cmlbed::trace
