// Recording cost: how many events per second the timeline records, and the cost of one
// event, both as a bare record() and as a Scope (two clock reads plus the record).
#include <mpi.h>

#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/trace/timeline.hpp"
#include "runtime_benchmarks.hpp"

namespace cmlbed::bench {

Json recording_cost(const RuntimeOptions& options) {
  const int rank = net::comm_rank(MPI_COMM_WORLD);
  if (rank != 0) return Json();
  constexpr int kEvents = 1000000;
  std::vector<double> record_ns, scope_ns;
  // One timeline for all repeats, drained the way the driver drains it each round, so
  // the figures are the steady state of a long run (the warm-up repeats pay the first
  // touches of the buffers).
  trace::Timeline timeline(0, kEvents);
  std::vector<trace::Event> drained;
  for (int repeat = -options.warmup; repeat < options.repeats; ++repeat) {
    trace::Event event = trace::compute_event(trace::EventKind::forward, 1, 2, 3);
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kEvents; ++i) {
      event.batch = i;
      timeline.record(event);
    }
    const double record = seconds_since(start) / kEvents * 1e9;
    timeline.drain_into(drained);
    start = std::chrono::steady_clock::now();
    for (int i = 0; i < kEvents; ++i) {
      trace::Timeline::Scope scope(timeline, event);
    }
    const double scoped = seconds_since(start) / kEvents * 1e9;
    timeline.drain_into(drained);
    if (repeat >= 0) {  // below 0: warm-up
      record_ns.push_back(record);
      scope_ns.push_back(scoped);
    }
  }
  std::printf("timeline: record %.1f ns/event (%.1f M events/s), scope %.1f ns/event\n",
              median(record_ns), 1e3 / median(record_ns), median(scope_ns));
  return Json()
      .numbers("record_ns_per_event", record_ns)
      .numbers("scope_ns_per_event", scope_ns)
      .number("median_record_ns_per_event", median(record_ns))
      .number("median_scope_ns_per_event", median(scope_ns))
      .number("events_per_second", 1e9 / median(record_ns));
}

}  // namespace cmlbed::bench
