#pragma once
// The calling thread's CPU time: what devices.slowdown stretches (Timeline::Scope) and
// what the transfer method's compute spins for.
#include <time.h>

#include <chrono>

namespace cmlbed {

// CLOCK_THREAD_CPUTIME_ID cannot fail for the calling thread on Linux.
inline std::chrono::nanoseconds thread_cpu_time() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
}

}  // namespace cmlbed
