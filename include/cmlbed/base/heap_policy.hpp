#pragma once
// How the C library's allocator hands memory back to the kernel, set once at the start of
// every cmlbed program (the CLI and the benchmarks), so that a profile, a benchmark and
// a run allocate alike.
//
// glibc's default serves each block above a moving threshold (128 KiB at start) with its
// own mmap and unmaps it when freed, and trims the heap's top. A pipelined run frees and
// allocates activations, gradients and message buffers of 10-500 KB all the time, so its
// ranks kept faulting fresh zeroed pages in: measured 2026-12-02 on
// configs/bandwidth/100mbit.ini with one device at slowdown 1 (2 ranks on 2 cores),
// 91,000 page faults a second on the server and 54,000 per CPU-second on the device (the
// in-process device-pattern benchmark: 16,000), and a device's forwards grew with the
// micro-batch index, 2.95, 3.06, 3.57, 5.12 ms, once the server computed beside them.
// With blocks up to 32 MiB kept in the heap and no trimming: 3.04, 3.09, 3.18, 3.16 ms,
// the first backward after the step 3.8 instead of 5.0 ms. The cost: a rank's resident
// memory stays at its peak heap use instead of shrinking between rounds.
//
// CMLBED_HEAP=system in the environment leaves glibc's defaults (to compare).
#include <string>

namespace cmlbed {

// Applies the policy (idempotent); returns its name for the results file: "keep" (blocks
// up to 32 MiB kept, no trimming), "system" (CMLBED_HEAP=system: glibc's defaults) or
// "system (mallopt refused)" (another allocator, e.g. a sanitizer's). Throws
// std::invalid_argument for any other CMLBED_HEAP.
std::string apply_heap_policy();

// The policy in effect: what apply_heap_policy() chose, "system" before it has run.
std::string heap_policy();

}  // namespace cmlbed
