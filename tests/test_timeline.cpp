// The timeline records scoped stages and drains them in order; compute stretching makes
// a stage last `slowdown` times its measured length, pacing makes it last a set length.
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>

#include "cmlbed/base/thread_cpu.hpp"
#include "cmlbed/trace/timeline.hpp"

namespace cmlbed::trace {
namespace {

TEST(Timeline, ScopesRecordTheirSpanAndDrainEmpties) {
  Timeline timeline(1000);
  {
    Timeline::Scope scope(timeline, compute_event(EventKind::forward, 2, 3, 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const auto events = timeline.drain();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::forward);
  EXPECT_EQ(events[0].lane, Lane::compute);
  EXPECT_EQ(events[0].round, 2);
  EXPECT_EQ(events[0].batch, 3);
  EXPECT_EQ(events[0].micro_batch, 1);
  EXPECT_GE(events[0].t_end_ns - events[0].t_start_ns, 2000000);
  EXPECT_TRUE(timeline.drain().empty());
}

TEST(Timeline, DisabledRecordsNothing) {
  Timeline timeline;
  timeline.set_enabled(false);
  { Timeline::Scope scope(timeline, compute_event(EventKind::step, 0)); }
  EXPECT_TRUE(timeline.drain().empty());
}

TEST(Timeline, OffsetShiftsTheTimeBase) {
  Timeline zero(0), shifted(5000000000);
  const std::int64_t a = zero.now_ns();
  const std::int64_t b = shifted.now_ns();
  EXPECT_NEAR(static_cast<double>(b - a), 5e9, 1e7);
}

// Busy for `ms` of this thread's CPU time.
void spin_cpu(int ms) {
  const auto end = thread_cpu_time() + std::chrono::milliseconds(ms);
  volatile double x = 1;
  while (thread_cpu_time() < end) x = x * 1.0000001;
}

void sleep_20ms() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

// One stage stretched 3x around `work`: its length on the timeline.
template <typename Work>
std::int64_t stretched_3x_ns(Timeline& timeline, Work work) {
  { Timeline::Scope stage(timeline, compute_event(EventKind::forward, 0), 3.0); work(); }
  const auto events = timeline.drain();
  EXPECT_EQ(events.size(), 1u);
  return events.empty() ? 0 : events[0].t_end_ns - events[0].t_start_ns;
}

TEST(TimelineScope, StretchesTheThreadsCpuTimeByTheSlowdown) {
  Timeline timeline;
  EXPECT_EQ(timeline.stretch_basis(), Timeline::StretchBasis::thread_cpu);
  // 20 ms of CPU stretched 3x: at least 60 ms on the timeline.
  const std::int64_t busy = stretched_3x_ns(timeline, [] { spin_cpu(20); });
  EXPECT_GE(busy, 60000000);
  EXPECT_LT(busy, 1000000000);
  // Waiting is not work: 20 ms asleep (as a thread waits for a core) is not stretched.
  const std::int64_t asleep = stretched_3x_ns(timeline, sleep_20ms);
  EXPECT_GE(asleep, 20000000);
  EXPECT_LT(asleep, 55000000);
}

TEST(TimelineScope, StretchesTheWallTimeWhereTheWorkIsOnSeveralThreads) {
  Timeline timeline;
  timeline.set_stretch_basis(Timeline::StretchBasis::wall);
  const std::int64_t asleep = stretched_3x_ns(timeline, sleep_20ms);
  EXPECT_GE(asleep, 60000000);
  EXPECT_LT(asleep, 1000000000);
}

TEST(TimelineScope, PacedStageLastsItsLengthWhateverTheWork) {
  Timeline timeline;
  for (const int work_ms : {0, 5, 20}) {
    Timeline::Scope stage(timeline, compute_event(EventKind::forward, 0), std::chrono::milliseconds(40));
    std::this_thread::sleep_for(std::chrono::milliseconds(work_ms));
  }
  const auto events = timeline.drain();
  ASSERT_EQ(events.size(), 3u);
  for (const Event& event : events) {
    EXPECT_GE(event.t_end_ns - event.t_start_ns, 40000000);
    EXPECT_LT(event.t_end_ns - event.t_start_ns, 1000000000);
  }
  const Timeline::PaceStats pace = timeline.pace_stats();
  EXPECT_EQ(pace.paced, 3);
  EXPECT_EQ(pace.overran, 0);
  EXPECT_EQ(pace.overrun_ns, 0);
}

// Each held stage says whether it kept its length: the trace marks the ones that did not.
TEST(TimelineScope, HeldStagesSayWhetherTheyOverran) {
  Timeline timeline;
  {
    Timeline::Scope kept(timeline, compute_event(EventKind::forward, 0), std::chrono::milliseconds(20));
  }
  {
    Timeline::Scope overran(timeline, compute_event(EventKind::backward, 0), std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(15));
  }
  {
    Timeline::Scope plain(timeline, compute_event(EventKind::step, 0));
  }
  {
    // 2 ms of CPU stretched 50x: overran only if its thread waited 98 ms for a core.
    Timeline::Scope stretched(timeline, compute_event(EventKind::forward, 0), 50.0);
    spin_cpu(2);
  }
  const auto events = timeline.drain();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].held, Held::kept);
  EXPECT_EQ(events[1].held, Held::overran);
  EXPECT_EQ(events[2].held, Held::no);
  EXPECT_EQ(events[3].held, Held::kept);
}

TEST(TimelineScope, PacedStageThatOverrunsIsCounted) {
  Timeline timeline;
  {
    Timeline::Scope stage(timeline, compute_event(EventKind::forward, 0), std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  const auto events = timeline.drain();
  ASSERT_EQ(events.size(), 1u);
  // The work's 30 ms, not the paced 10: nothing is cut short.
  EXPECT_GE(events[0].t_end_ns - events[0].t_start_ns, 30000000);
  const Timeline::PaceStats pace = timeline.pace_stats();
  EXPECT_EQ(pace.paced, 1);
  EXPECT_EQ(pace.overran, 1);
  EXPECT_GE(pace.overrun_ns, 20000000);
  EXPECT_GE(pace.worst_ratio, 3.0);
}

}  // namespace
}  // namespace cmlbed::trace
