#pragma once
// How the C library's allocator hands memory back to the kernel, set once at the start of
// every cmlbed program (the CLI and the benchmarks), so that a profile, a benchmark and
// a run allocate alike.
//
// glibc's default serves each block above a moving threshold (128 KiB at start) with its
// own mmap and unmaps it when freed, and trims the heap's top. A pipelined run frees and
// allocates activations, gradients and message buffers of 10-500 KB all the time, so
// under those defaults its ranks fault fresh zeroed pages in for every one, and a
// device's stages slow down while the server computes beside them. Blocks up to 32 MiB
// therefore stay in the heap and the heap is never trimmed (what that saved:
// docs/explanation/architecture.md, "Memory"). The cost: a rank's resident memory stays
// at its peak heap use instead of shrinking between rounds.
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
