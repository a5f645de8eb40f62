// When the communication thread sleeps (wake_policy.hpp), run on a virtual clock: the
// poll backs off to 1 ms while receives wait for a first byte and to 200 us while bytes
// move, shaped arrivals are looked at their own rhythm, paced sends wake exactly when
// chunks are due, and a thread with nothing to do parks.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "cmlbed/net/wake_policy.hpp"

namespace {

using cmlbed::net::kMaxPollIntervalNs;
using cmlbed::net::kMaxPollWhileMovingNs;
using cmlbed::net::kMinPollIntervalNs;
using cmlbed::net::plan_wake;
using cmlbed::net::WakeInputs;
using cmlbed::net::WakePlan;

constexpr std::int64_t kUs = 1000;
constexpr std::int64_t kMs = 1000000;

// The thread's loop on a virtual clock for `span_ns` with nothing completing: the
// times it sleeps, in order.
std::vector<std::int64_t> sleeps_over(WakeInputs in, std::int64_t span_ns) {
  std::vector<std::int64_t> sleeps;
  const std::int64_t end = in.now_ns + span_ns;
  while (in.now_ns < end) {
    const WakePlan plan = plan_wake(in);
    EXPECT_EQ(plan.kind, WakePlan::Kind::sleep);
    if (plan.kind != WakePlan::Kind::sleep) break;
    sleeps.push_back(plan.sleep_ns);
    in.now_ns += plan.sleep_ns;
    in.poll_ns = plan.next_poll_ns;
  }
  return sleeps;
}

TEST(WakePolicy, AReceivePostedAheadBacksOffToAMillisecond) {
  WakeInputs in;
  in.requests_pending = true;
  const auto sleeps = sleeps_over(in, 1000 * kMs);
  ASSERT_GT(sleeps.size(), 10u);
  for (std::size_t i = 0; i < 9; ++i) EXPECT_EQ(sleeps[i], kMinPollIntervalNs << i) << i;
  EXPECT_EQ(sleeps[9], kMaxPollIntervalNs);
  // 1,000 wake-ups a second at most, plus the 9 of the ramp: each one costs tens of
  // microseconds of a core on these machines.
  EXPECT_LE(sleeps.size(), 1010u);
  EXPECT_GE(sleeps.size(), 1000u);
}

TEST(WakePolicy, MovingBytesAreLookedAtEvery200Microseconds) {
  WakeInputs in;
  in.requests_pending = true;
  in.bytes_moving = true;
  const auto sleeps = sleeps_over(in, 100 * kMs);
  EXPECT_EQ(sleeps.back(), kMaxPollWhileMovingNs);
  EXPECT_LE(sleeps.size(), 100 * kMs / kMaxPollWhileMovingNs + 8);
}

TEST(WakePolicy, ProgressLooksAgainAtOnceAndResetsTheBackoff) {
  WakeInputs in;
  in.requests_pending = true;
  in.poll_ns = kMaxPollIntervalNs;
  in.progressed = true;
  const WakePlan plan = plan_wake(in);
  EXPECT_EQ(plan.kind, WakePlan::Kind::again);
  EXPECT_EQ(plan.next_poll_ns, kMinPollIntervalNs);
}

TEST(WakePolicy, ShapedArrivalsAreLookedAtTheirOwnRhythm) {
  WakeInputs in;
  in.requests_pending = true;
  in.arrival_look_ns = 5 * kMs;
  EXPECT_EQ(plan_wake(in).sleep_ns, 5 * kMs);
  // ... unless an unshaped message's bytes are moving too.
  in.bytes_moving = true;
  EXPECT_EQ(plan_wake(in).sleep_ns, kMinPollIntervalNs);
}

TEST(WakePolicy, PacedSendsWakeExactlyWhenTheNextChunksAreDue) {
  WakeInputs in;
  in.now_ns = 10 * kMs;
  in.requests_pending = true;
  in.only_paced_sends = true;
  in.next_release_ns = 13 * kMs;
  EXPECT_EQ(plan_wake(in).sleep_ns, 3 * kMs);
  in.next_release_ns = 9 * kMs;  // overdue: at once
  EXPECT_EQ(plan_wake(in).sleep_ns, 0);
  in.next_release_ns.reset();  // the last chunk went: look once a millisecond
  EXPECT_EQ(plan_wake(in).sleep_ns, kMaxPollIntervalNs);
}

TEST(WakePolicy, NoSleepRunsPastTheNextRelease) {
  WakeInputs in;
  in.requests_pending = true;
  in.arrival_look_ns = 5 * kMs;
  in.next_release_ns = 300 * kUs;
  // Released chunks count as progress; until then every wake-up is at or before the
  // deadline, and the last lands on it.
  std::int64_t woke = 0;
  while (in.now_ns < *in.next_release_ns) {
    const WakePlan plan = plan_wake(in);
    ASSERT_EQ(plan.kind, WakePlan::Kind::sleep);
    in.now_ns += plan.sleep_ns;
    in.poll_ns = plan.next_poll_ns;
    ASSERT_LE(in.now_ns, *in.next_release_ns);
    ++woke;
  }
  EXPECT_EQ(in.now_ns, *in.next_release_ns);
  EXPECT_EQ(woke, 1);  // the 5 ms look would have overslept: one wake-up, at the release
}

TEST(WakePolicy, NothingInFlightParksAndQueuedChunksSleepUntilDue) {
  WakeInputs in;
  in.poll_ns = 64 * kUs;
  WakePlan plan = plan_wake(in);
  EXPECT_EQ(plan.kind, WakePlan::Kind::park);
  EXPECT_EQ(plan.next_poll_ns, 64 * kUs);  // no request polled: the backoff stands
  in.now_ns = 1 * kMs;
  in.next_release_ns = 26 * kMs;  // a chunk on a 10 mbit link
  plan = plan_wake(in);
  EXPECT_EQ(plan.kind, WakePlan::Kind::sleep);
  EXPECT_EQ(plan.sleep_ns, 25 * kMs);
}

}  // namespace
