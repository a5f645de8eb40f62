// When the communication thread wakes for shaped messages' chunks (chunk_pacing.hpp):
// middle chunks go in small groups, never early and never much late; headers and the
// end of a message keep the link's exact deadlines.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <vector>

#include "cmlbed/net/chunk_pacing.hpp"

namespace {

using cmlbed::net::chunk_look_interval_ns;
using cmlbed::net::group_release_ns;
using cmlbed::net::kChunksPerWake;
using cmlbed::net::kReleaseSlackNs;

constexpr std::int64_t kUs = 1000;
constexpr std::int64_t kMs = 1000000;

struct Chunk {
  std::int64_t due_ns;
  bool observed;
};

// A message as the sender queues it: a header, then `payload_chunks` chunks `interval`
// apart, the last one observed.
void queue_message(std::deque<Chunk>& queue, std::int64_t start_ns, int payload_chunks,
                   std::int64_t interval_ns) {
  queue.push_back({start_ns, true});
  for (int i = 0; i < payload_chunks; ++i) {
    queue.push_back({start_ns + (i + 1) * interval_ns, i + 1 == payload_chunks});
  }
}

struct Release {
  std::int64_t due_ns;
  std::int64_t released_ns;
  bool observed;
  int wake;  // which wake-up let it go
};

// Runs the sender's loop on a virtual clock: wake, let every chunk that is due go.
std::vector<Release> drain(std::deque<Chunk> queue) {
  std::vector<Release> releases;
  int wakes = 0;
  while (!queue.empty()) {
    const std::int64_t now = group_release_ns(queue);
    EXPECT_GE(now, queue.front().due_ns) << "woke before anything was due";
    while (!queue.empty() && queue.front().due_ns <= now) {
      releases.push_back({queue.front().due_ns, now, queue.front().observed, wakes});
      queue.pop_front();
    }
    ++wakes;
  }
  return releases;
}

int wake_count(const std::vector<Release>& releases) {
  return releases.empty() ? 0 : releases.back().wake + 1;
}

TEST(ChunkPacing, AnObservedChunkFirstLeavesAtItsDeadline) {
  const std::deque<Chunk> queue{{7 * kMs, true}, {8 * kMs, false}, {9 * kMs, false}};
  EXPECT_EQ(group_release_ns(queue), 7 * kMs);
}

TEST(ChunkPacing, MiddleChunksGoInGroupsOfAtMostChunksPerWake) {
  std::deque<Chunk> queue;
  for (int i = 0; i < 20; ++i) queue.push_back({i * kMs, false});
  queue.push_back({20 * kMs, true});
  // 1 ms apart: the first kChunksPerWake go together at the last one's deadline.
  EXPECT_EQ(group_release_ns(queue), static_cast<std::int64_t>(kChunksPerWake - 1) * kMs);
}

TEST(ChunkPacing, NoChunkWaitsLongerThanTheSlack) {
  std::deque<Chunk> queue;
  for (int i = 0; i < 20; ++i) queue.push_back({i * 3 * kMs, false});
  queue.push_back({60 * kMs, true});
  EXPECT_EQ(group_release_ns(queue), 3 * kMs);  // 6 ms would keep the first 6 ms waiting
  std::deque<Chunk> slow;
  for (int i = 0; i < 20; ++i) slow.push_back({i * 10 * kMs, false});
  slow.push_back({200 * kMs, true});
  EXPECT_EQ(group_release_ns(slow), 0);  // a slow link: every chunk on its own
}

TEST(ChunkPacing, AWholeMessageKeepsItsHeaderAndEndOnTimeWithAQuarterOfTheWakeUps) {
  // 64 chunks of 32 KiB at 200 mbit: 1.31 ms apart.
  constexpr std::int64_t kInterval = 1311 * kUs;
  constexpr int kPayloadChunks = 64;
  std::deque<Chunk> queue;
  queue_message(queue, 0, kPayloadChunks, kInterval);
  const std::vector<Release> releases = drain(queue);
  ASSERT_EQ(releases.size(), static_cast<std::size_t>(kPayloadChunks + 1));
  std::vector<int> per_wake(static_cast<std::size_t>(wake_count(releases)));
  for (std::size_t i = 0; i < releases.size(); ++i) {
    const Release& r = releases[i];
    EXPECT_GE(r.released_ns, r.due_ns) << "chunk " << i << " left early";
    EXPECT_LE(r.released_ns - r.due_ns, kReleaseSlackNs) << "chunk " << i;
    // The header, the last chunk and the kChunksPerWake chunks before it: on time.
    if (r.observed || i + 1 + kChunksPerWake >= releases.size()) {
      EXPECT_EQ(r.released_ns, r.due_ns) << "chunk " << i;
    }
    ++per_wake[static_cast<std::size_t>(r.wake)];
  }
  for (int n : per_wake) EXPECT_LE(n, static_cast<int>(kChunksPerWake));
  // The header, 60 chunks in 15 groups of 4, the last 4 on their own: 20, not 65.
  EXPECT_EQ(wake_count(releases), 20);
}

TEST(ChunkPacing, ABackToBackMessageDoesNotHoldTheEndOfTheOneBefore) {
  constexpr std::int64_t kInterval = 262 * kUs;  // 1 gbit
  std::deque<Chunk> queue;
  queue_message(queue, 0, 10, kInterval);
  queue_message(queue, 11 * kInterval, 10, kInterval);
  const std::vector<Release> releases = drain(queue);
  ASSERT_EQ(releases.size(), 22u);
  for (const Release& r : releases) {
    if (r.observed) {
      EXPECT_EQ(r.released_ns, r.due_ns);
    }
    EXPECT_GE(r.released_ns, r.due_ns);
  }
}

TEST(ChunkPacing, TheReceiverLooksFinelyNearTheEndAndOncePerGroupBefore) {
  constexpr std::int64_t kFineBytes = 8 * 32768;
  constexpr std::int64_t kMaxLook = 1 * kMs;
  // 200 mbit, 32 KiB chunks (1.31 ms apart): half an interval at the end, the slack before.
  EXPECT_EQ(chunk_look_interval_ns(1311 * kUs, kFineBytes, kFineBytes, kMaxLook), 655500);
  EXPECT_EQ(chunk_look_interval_ns(1311 * kUs, kFineBytes + 1, kFineBytes, kMaxLook),
            kReleaseSlackNs);
  // 1 gbit (262 us): once per group of kChunksPerWake before the end.
  EXPECT_EQ(chunk_look_interval_ns(262 * kUs, 64 << 20, kFineBytes, kMaxLook),
            static_cast<std::int64_t>(kChunksPerWake) * 262 * kUs);
  // 10 mbit (26 ms): no more than max_look_ns apart at the end, the slack before.
  EXPECT_EQ(chunk_look_interval_ns(26 * kMs, 0, kFineBytes, kMaxLook), kMaxLook);
  EXPECT_EQ(chunk_look_interval_ns(26 * kMs, 64 << 20, kFineBytes, kMaxLook), kReleaseSlackNs);
}

}  // namespace
