#include "cmlbed/net/wake_policy.hpp"

#include <algorithm>

namespace cmlbed::net {

WakePlan plan_wake(const WakeInputs& in) {
  WakePlan plan;
  if (in.progressed) {
    plan.kind = WakePlan::Kind::again;
    plan.next_poll_ns = kMinPollIntervalNs;
    return plan;
  }
  plan.next_poll_ns = in.poll_ns;
  const auto until_release = [&] { return std::max<std::int64_t>(0, *in.next_release_ns - in.now_ns); };
  if (!in.requests_pending) {
    if (!in.next_release_ns) return plan;  // park
    plan.kind = WakePlan::Kind::sleep;
    plan.sleep_ns = until_release();
    return plan;
  }
  // MPI needs to be called for transfers to move: poll, backing off while idle, but
  // wake in time for the next chunk the link lets go.
  std::int64_t wait = in.poll_ns;
  if (in.only_paced_sends) {
    // Their completion matters little: the link lets the next chunks go at their
    // deadlines anyway, so wake for the next release, or once a millisecond after the
    // last chunk.
    wait = in.next_release_ns ? until_release() : kMaxPollIntervalNs;
  } else if (in.arrival_look_ns && !in.bytes_moving) {
    // Chunks of shaped messages come at the link's pace: look at that rhythm, not at the
    // unshaped one (each wake-up disturbs the computing thread).
    wait = std::max(wait, *in.arrival_look_ns);
  }
  if (in.next_release_ns) wait = std::min(wait, until_release());
  plan.kind = WakePlan::Kind::sleep;
  plan.sleep_ns = wait;
  plan.next_poll_ns = std::min(in.poll_ns * kPollBackoff,
                               in.bytes_moving ? kMaxPollWhileMovingNs : kMaxPollIntervalNs);
  return plan;
}

}  // namespace cmlbed::net
