// The one seed rule (base/seed_streams.hpp): fixed values (a stream's seed is part of
// what makes a run repeatable, so the rule may not change silently), and other
// purposes, indices or run seeds give other streams.
#include <gtest/gtest.h>

#include <set>

#include "cmlbed/base/seed_streams.hpp"

namespace cmlbed {
namespace {

TEST(SeedStreams, TheRuleIsFixed) {
  static_assert(stream_seed(1, "dropout", {3}) == stream_seed(1, "dropout", {3}));
  EXPECT_EQ(splitmix64(0), 0xE220A8397B1DCDAFULL);  // splitmix64's first output from 0
  EXPECT_EQ(stream_seed(1, "dropout", {3}), 0xDEFDE8623004308AULL);
}

TEST(SeedStreams, EveryFieldMatters) {
  std::set<std::uint64_t> seen;
  for (const std::uint64_t seed : {0ULL, 1ULL, 2ULL}) {
    for (const char* purpose : {"dropout", "noise", "data order"}) {
      for (const std::int64_t a : {0, 1, 2}) {
        for (const std::int64_t b : {0, 1, -1}) seen.insert(stream_seed(seed, purpose, {a, b}));
      }
      seen.insert(stream_seed(seed, purpose));
    }
  }
  EXPECT_EQ(seen.size(), 3u * 3u * (3u * 3u + 1u));
  EXPECT_NE(stream_seed(1, "dropout", {1, 2}), stream_seed(1, "dropout", {2, 1}));
}

}  // namespace
}  // namespace cmlbed
