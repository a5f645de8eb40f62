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

// Resident memory from /proc/self/status: VmRSS now and VmHWM (the peak so far), in
// bytes. Both count every page the process has resident, shared library pages
// included, so compare ranks with an idle rank's figures (scripts/bench-startup.sh);
// -1 where they cannot be read.
struct MemoryUse {
  std::int64_t rss_bytes = -1;
  std::int64_t peak_rss_bytes = -1;
};
MemoryUse memory_use();

}  // namespace cmlbed::trace
