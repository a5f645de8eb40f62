#pragma once
// How long the transport's communication thread sleeps between looks at MPI: a pure
// function of what it has in flight, so that the policy can be tested on a virtual
// clock (tests/test_wake_policy.cpp) apart from MPI and threads.
//
// While MPI requests are pending the thread polls, starting at the minimum interval
// after any progress and backing off geometrically: up to 200 us while a message's bytes
// are moving (TCP pushes a large message only as often as MPI is called, so a longer cap
// costs throughput: docs/explanation/architecture.md, "What waiting costs"), up to 1 ms
// while only receives posted ahead wait for their first byte (cheap on CPU: each
// wake-up also disturbs the computing thread; see the overlap benchmark). Shaped
// messages are the exception: their chunks come at the link's pace, which the header
// carries, so their receiver looks at that rhythm, and their sender wakes only when
// chunks are due (both in chunk_pacing.hpp).
#include <cstdint>
#include <optional>

namespace cmlbed::net {

constexpr std::int64_t kMinPollIntervalNs = 2'000;
constexpr std::int64_t kPollBackoff = 2;
constexpr std::int64_t kMaxPollWhileMovingNs = 200'000;
constexpr std::int64_t kMaxPollIntervalNs = 1'000'000;

// What the thread has in flight when it has done all it could and must sleep.
struct WakeInputs {
  std::int64_t now_ns = 0;
  std::int64_t poll_ns = kMinPollIntervalNs;  // the current poll interval (backoff state)
  bool progressed = false;       // new work, chunks released or requests completed
  bool requests_pending = false;  // MPI requests to drive
  bool only_paced_sends = false;  // every pending request is a chunk sent on a shaped link
  bool bytes_moving = false;      // a pending request moves bytes of an unshaped message
  std::optional<std::int64_t> arrival_look_ns;  // the shortest look interval of shaped arrivals
  std::optional<std::int64_t> next_release_ns;  // when the next chunk group may leave
};

struct WakePlan {
  enum class Kind {
    again,  // progress was made: look again at once
    sleep,  // sleep sleep_ns (or until new work comes)
    park,   // nothing to drive or release: sleep until new work comes
  };
  Kind kind = Kind::park;
  std::int64_t sleep_ns = 0;
  std::int64_t next_poll_ns = kMinPollIntervalNs;  // the poll interval for the next turn
};

WakePlan plan_wake(const WakeInputs& in);

}  // namespace cmlbed::net
