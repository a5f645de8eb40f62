#include "cmlbed/base/heap_policy.hpp"

#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace cmlbed {
namespace {

// glibc's largest mmap threshold on 64-bit hosts (DEFAULT_MMAP_THRESHOLD_MAX): blocks
// above it (a VGG-16 classifier's weights, say) are still mapped on their own.
constexpr int kKeepBlocksUpTo = 32 * 1024 * 1024;

std::string applied = "system";  // until apply_heap_policy() runs, glibc's defaults hold

bool system_requested() {
  const char* value = std::getenv("CMLBED_HEAP");
  if (value == nullptr || *value == '\0' || std::strcmp(value, "keep") == 0) return false;
  if (std::strcmp(value, "system") == 0) return true;
  throw std::invalid_argument(std::string("CMLBED_HEAP=") + value +
                              ": expected 'keep' (the default) or 'system' (glibc's defaults)");
}

}  // namespace

std::string apply_heap_policy() {
  if (system_requested()) return applied = "system";
  // mallopt returns 1 on success, 0 where refused: an allocator that is not glibc's
  // (the sanitizers' refuses every setting) keeps its own ways, and the results file says
  // so. A trim threshold of -1 turns trimming off (mallopt(3)).
  if (mallopt(M_MMAP_THRESHOLD, kKeepBlocksUpTo) != 1 || mallopt(M_TRIM_THRESHOLD, -1) != 1) {
    return applied = "system (mallopt refused)";
  }
  return applied = "keep";
}

std::string heap_policy() { return applied; }

}  // namespace cmlbed
