#pragma once
// What the operating system knows about this process: when it started and how much
// memory it holds. The start-up and memory figures of a run (/process in the results
// file) come from here, so that a study that grows to many ranks can see where its
// start-up goes and what each rank costs.
#include <cstdint>
#include <optional>

namespace cmlbed::trace {

// Now on CLOCK_BOOTTIME, nanoseconds: the clock /proc/self/stat's start time counts on.
std::int64_t boottime_now_ns();

// CPU time of this process so far (every thread), nanoseconds.
std::int64_t process_cpu_ns();

// When this process was started (exec), on CLOCK_BOOTTIME; resolution one clock tick
// (10 ms on Linux). Empty where /proc/self/stat cannot be read or parsed.
std::optional<std::int64_t> process_start_ns();

// Resident memory in bytes, -1 where it cannot be read: VmRSS now and VmHWM (the peak
// so far) from /proc/self/status, which count every page the process has resident,
// shared library pages included (compare ranks with an idle rank's figures,
// scripts/bench/bench-startup.sh); and Pss from /proc/self/smaps_rollup, which divides each
// shared page among the processes that map it, so that the ranks' Pss add up to the
// memory the run takes from the machine.
struct MemoryUse {
  std::int64_t rss_bytes = -1;
  std::int64_t peak_rss_bytes = -1;
  std::int64_t pss_bytes = -1;
};
MemoryUse memory_use();

}  // namespace cmlbed::trace
