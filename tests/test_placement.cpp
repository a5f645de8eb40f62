// Where the ranks sit: CPU lists as the kernel writes them, and ranks grouped by node.
#include <gtest/gtest.h>

#include "cmlbed/base/cpu_usage.hpp"
#include "cmlbed/net/placement.hpp"

TEST(Placement, ParsesCpuLists) {
  EXPECT_EQ(cmlbed::net::parse_cpu_list("0-3,6"), (std::set<int>{0, 1, 2, 3, 6}));
  EXPECT_EQ(cmlbed::net::parse_cpu_list("1"), (std::set<int>{1}));
  EXPECT_TRUE(cmlbed::net::parse_cpu_list("").empty());
  EXPECT_THROW(cmlbed::net::parse_cpu_list("3-1"), std::invalid_argument);
  EXPECT_THROW(cmlbed::net::parse_cpu_list("a,b"), std::invalid_argument);
  EXPECT_THROW(cmlbed::net::parse_cpu_list("0,,1"), std::invalid_argument);
}

TEST(Placement, GroupsRanksByNodeAndUnitesTheirCores) {
  // Open MPI binds each of 2 ranks to a core; with more, none is bound.
  const auto nodes = cmlbed::net::node_shares({"a", "a", "b", "a", "b"}, {"0", "1", "0-3", "0-1", "0-3"});
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].ranks, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(nodes[0].cpus.size(), 2u);
  EXPECT_DOUBLE_EQ(nodes[0].ranks_per_core(), 1.5);
  EXPECT_DOUBLE_EQ(cmlbed::net::most_ranks_per_core(nodes), 1.5);
  EXPECT_EQ(cmlbed::net::placement_text(nodes), "a: 3 ranks on 2 cores (0-1); b: 2 ranks on 4 cores (0-3)");
  EXPECT_THROW(cmlbed::net::node_shares({"a"}, {}), std::invalid_argument);
}

TEST(Placement, ThisProcessHasCoresAndCpuFigures) {
  const std::set<int> cpus = cmlbed::usable_cpus();
  EXPECT_GE(cpus.size(), 1u);
  EXPECT_EQ(cmlbed::net::parse_cpu_list(cmlbed::net::cpu_list_text(cpus)), cpus);
  const cmlbed::CpuUsage before = cmlbed::process_cpu_usage();
  volatile double sink = 0;
  for (int i = 0; i < 20000000; ++i) sink = sink + i * 1e-9;
  const cmlbed::CpuUsage after = cmlbed::process_cpu_usage();
  EXPECT_GT(after.cpu_ns, before.cpu_ns);  // schedstat counts the loop's CPU time
  EXPECT_GE(after.runqueue_ns, before.runqueue_ns);
  EXPECT_GT(cmlbed::host_ticks().total, 0);
}
