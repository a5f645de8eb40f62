#pragma once
// When the communication thread wakes for the chunks of shaped messages. Each wake-up
// costs the core it lands on, the switch more than the thread's own work, and the
// computing thread beside it pays for it (docs/explanation/links.md, "What shaping
// costs the computing rank"). Nobody sees a middle chunk of a message leave or arrive: the
// timeline records a message when its header comes and when its last byte does. So
// middle chunks travel in small groups, and only the header and the end of a message
// keep the link's exact rhythm.
#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace cmlbed::net {

// Up to this many chunks leave together, the earlier ones late by at most
// kReleaseSlackNs; never early (the token bucket's deadlines stay lower bounds).
constexpr std::size_t kChunksPerWake = 4;
constexpr std::int64_t kReleaseSlackNs = 5'000'000;

// The sender's next wake-up for a queue of chunks in departure order (elements with
// `due_ns` and `observed`: a header or a message's last chunk). The first chunk goes
// alone at its deadline if it, or one of the kChunksPerWake chunks after it, is
// observed: the chunks before an observed one leave one by one, so it never queues
// behind a group and leaves on time. Otherwise it waits for the chunks after it, up to
// kChunksPerWake in all and kReleaseSlackNs past its deadline, and the wake-up is the
// deadline of the group's last chunk. The queue must not be empty.
template <typename ChunkQueue>
std::int64_t group_release_ns(const ChunkQueue& queue) {
  const auto observed_within = [&](std::size_t first, std::size_t count) {
    const std::size_t end = std::min<std::size_t>(queue.size(), first + count);
    for (std::size_t i = first; i < end; ++i) {
      if (queue[i].observed) return true;
    }
    return false;
  };
  const std::int64_t latest = queue[0].due_ns + kReleaseSlackNs;
  std::size_t group = 1;
  // Chunk group - 1 may wait for chunk group unless it, or one of the kChunksPerWake
  // after it, is observed.
  while (group < kChunksPerWake && group < queue.size() && queue[group].due_ns <= latest &&
         !observed_within(group - 1, kChunksPerWake + 1)) {
    ++group;
  }
  return queue[group - 1].due_ns;
}

// How long the receiver of a shaped message waits between looks for a payload chunk
// that has `bytes_after` bytes of the message after it. The last chunks: half a chunk
// interval (at most max_look_ns), so the message is seen complete close to when it is.
// Before them chunks come in groups: about once per group, at most kReleaseSlackNs.
// `fine_bytes` is how close to the end the fine looking starts (the receiver posts its
// chunk receives a window ahead, so the fine looks begin that much earlier still).
std::int64_t chunk_look_interval_ns(std::int64_t chunk_interval_ns, std::int64_t bytes_after,
                                    std::int64_t fine_bytes, std::int64_t max_look_ns);

}  // namespace cmlbed::net
