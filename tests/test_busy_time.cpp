// Busy time: the union of compute-lane intervals, worked out by hand.

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "cmlbed/trace/busy_time.hpp"

namespace cmlbed::trace {
namespace {

using Intervals = std::vector<std::pair<std::int64_t, std::int64_t>>;

constexpr std::int64_t kSecond = 1'000'000'000;

Event event(Lane lane, EventKind kind, std::int64_t start_ns, std::int64_t end_ns) {
  Event e;
  e.lane = lane;
  e.kind = kind;
  e.t_start_ns = start_ns;
  e.t_end_ns = end_ns;
  return e;
}

Event compute(EventKind kind, std::int64_t start_ns, std::int64_t end_ns) {
  return event(Lane::compute, kind, start_ns, end_ns);
}

TEST(UnionSeconds, EmptyIsZero) { EXPECT_EQ(union_seconds({}), 0.0); }

TEST(UnionSeconds, DisjointIntervalsAdd) {
  EXPECT_DOUBLE_EQ(union_seconds(Intervals{{0, kSecond}, {2 * kSecond, 5 * kSecond}}), 4.0);
}

TEST(UnionSeconds, OverlapCountsOnce) {
  // [0,10) and [5,15) cover 15; [20,30) nested in [20,40) adds 20: 35 ns.
  EXPECT_DOUBLE_EQ(union_seconds(Intervals{{0, 10}, {5, 15}, {20, 40}, {20, 30}}), 35e-9);
}

TEST(UnionSeconds, UnsortedInputAndTouchingIntervals) {
  // [30,40), [10,20), [20,30) touch end to start: one run [10,40).
  EXPECT_DOUBLE_EQ(union_seconds(Intervals{{30, 40}, {10, 20}, {20, 30}}), 30e-9);
}

TEST(UnionSeconds, EmptyAndReversedIntervalsAddNothing) {
  EXPECT_DOUBLE_EQ(union_seconds(Intervals{{5, 5}, {9, 3}, {100, 110}}), 10e-9);
  // A reversed interval must not swallow a later one that it seems to overlap.
  EXPECT_DOUBLE_EQ(union_seconds(Intervals{{0, 50}, {60, 70}, {55, 65}}), 65e-9);
}

TEST(UnionSeconds, NegativeTimesAndLargeValues) {
  // Times in rank 0's base may be negative for events before its epoch.
  EXPECT_DOUBLE_EQ(union_seconds(Intervals{{-kSecond, kSecond}}), 2.0);
  const std::int64_t late = 3'000'000 * kSecond;  // about 35 days of steady clock
  EXPECT_DOUBLE_EQ(union_seconds(Intervals{{late, late + kSecond / 2}}), 0.5);
}

TEST(CountsAsBusy, ComputeLaneExceptWait) {
  EXPECT_TRUE(counts_as_busy(compute(EventKind::forward, 0, 1)));
  EXPECT_TRUE(counts_as_busy(compute(EventKind::backward, 0, 1)));
  EXPECT_TRUE(counts_as_busy(compute(EventKind::step, 0, 1)));
  EXPECT_TRUE(counts_as_busy(compute(EventKind::aggregate, 0, 1)));
  EXPECT_TRUE(counts_as_busy(compute(EventKind::evaluate, 0, 1)));
  EXPECT_TRUE(counts_as_busy(compute(EventKind::compute, 0, 1)));
  EXPECT_TRUE(counts_as_busy(compute(EventKind::sleep, 0, 1)));
  EXPECT_FALSE(counts_as_busy(compute(EventKind::wait, 0, 1)));
  EXPECT_FALSE(counts_as_busy(event(Lane::uplink, EventKind::send, 0, 1)));
  EXPECT_FALSE(counts_as_busy(event(Lane::downlink, EventKind::recv, 0, 1)));
  EXPECT_FALSE(counts_as_busy(event(Lane::uplink, EventKind::wait, 0, 1)));
}

TEST(BusySecondsPerRank, ByHand) {
  // Round window [100, 200) ns.
  const std::vector<std::vector<Event>> events = {
      // Rank 0: forward [100,130) + backward [120,150) overlap -> [100,150) = 50;
      // a wait [150,190) and a send [150,190) are not busy; step [190,200) = 10.
      {compute(EventKind::forward, 100, 130), compute(EventKind::backward, 120, 150),
       compute(EventKind::wait, 150, 190), event(Lane::uplink, EventKind::send, 150, 190),
       compute(EventKind::step, 190, 200)},
      // Rank 1: nothing at all.
      {},
      // Rank 2: clipped at both ends: [50,110) -> 10, [180,300) -> 20; an event of the
      // previous round [0,90) lies wholly outside.
      {compute(EventKind::forward, 50, 110), compute(EventKind::aggregate, 180, 300),
       compute(EventKind::forward, 0, 90)},
      // Rank 3: only transfers and waits: idle.
      {event(Lane::downlink, EventKind::recv, 100, 200), compute(EventKind::wait, 100, 200)},
      // Rank 4: one event spanning the whole window and beyond: the whole window.
      {compute(EventKind::sleep, 0, 1000)},
  };
  const std::vector<double> busy = busy_seconds_per_rank(events, 100, 200);
  ASSERT_EQ(busy.size(), 5U);
  EXPECT_DOUBLE_EQ(busy[0], 60e-9);
  EXPECT_EQ(busy[1], 0.0);
  EXPECT_DOUBLE_EQ(busy[2], 30e-9);
  EXPECT_EQ(busy[3], 0.0);
  EXPECT_DOUBLE_EQ(busy[4], 100e-9);
}

TEST(BusySecondsPerRank, NoRanksAndEmptyWindow) {
  EXPECT_TRUE(busy_seconds_per_rank({}, 0, kSecond).empty());
  const std::vector<double> busy =
      busy_seconds_per_rank({{compute(EventKind::forward, 0, kSecond)}}, 500, 500);
  ASSERT_EQ(busy.size(), 1U);
  EXPECT_EQ(busy[0], 0.0);
}

}  // namespace
}  // namespace cmlbed::trace
