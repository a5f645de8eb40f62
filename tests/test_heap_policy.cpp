// The allocator's policy (cmlbed/base/heap_policy.hpp): with "keep", a block that glibc
// would map on its own (above its 128 KiB starting threshold) comes from the heap, and
// the environment chooses the policy. Run alone (ctest) or in this order in one process:
// the first case applies only "system", so the second starts from glibc's defaults.
#include "cmlbed/base/heap_policy.hpp"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <stdexcept>

namespace {

// AddressSanitizer replaces glibc's malloc with its own allocator, which has no mallopt
// and no mapped-block count: the policy cannot be observed (apply_heap_policy then says
// "system (mallopt refused)", as it would to a user of such a build).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kGlibcMalloc = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kGlibcMalloc = false;
#else
constexpr bool kGlibcMalloc = true;
#endif
#else
constexpr bool kGlibcMalloc = true;
#endif

// Blocks glibc serves with their own mmap right now.
std::size_t mapped_blocks() { return mallinfo2().hblks; }

TEST(HeapPolicy, EnvironmentChoosesAndRejectsUnknownValues) {
  EXPECT_EQ(cmlbed::heap_policy(), "system");  // before it is applied
  ASSERT_EQ(setenv("CMLBED_HEAP", "system", 1), 0);
  EXPECT_EQ(cmlbed::apply_heap_policy(), "system");
  EXPECT_EQ(cmlbed::heap_policy(), "system");
  ASSERT_EQ(setenv("CMLBED_HEAP", "fast", 1), 0);
  try {
    cmlbed::apply_heap_policy();
    FAIL() << "CMLBED_HEAP=fast was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("CMLBED_HEAP=fast"), std::string::npos) << e.what();
  }
  ASSERT_EQ(unsetenv("CMLBED_HEAP"), 0);
}

TEST(HeapPolicy, KeepServesLargeBlocksFromTheHeap) {
  if (!kGlibcMalloc) GTEST_SKIP() << "built with AddressSanitizer: malloc is not glibc's";
  // glibc's defaults first (nothing applied yet in this process): a 1 MiB block is mapped.
  const std::size_t before = mapped_blocks();
  void* mapped = std::malloc(1 << 20);
  ASSERT_NE(mapped, nullptr);
  EXPECT_EQ(mapped_blocks(), before + 1);
  std::free(mapped);

  ASSERT_EQ(cmlbed::apply_heap_policy(), "keep");
  EXPECT_EQ(cmlbed::heap_policy(), "keep");
  // 4 MiB: freeing the mapped block raised glibc's own threshold to 1 MiB, so only a
  // larger block tells its defaults from the policy.
  const std::size_t kept_before = mapped_blocks();
  void* kept = std::malloc(4 << 20);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(mapped_blocks(), kept_before);  // from the heap
  std::free(kept);
  // Above 32 MiB blocks are still mapped on their own.
  void* huge = std::malloc(std::size_t{48} << 20);
  ASSERT_NE(huge, nullptr);
  EXPECT_EQ(mapped_blocks(), kept_before + 1);
  std::free(huge);
}

}  // namespace
