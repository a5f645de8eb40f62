// The emulation verdict's rules on hand-made figures: each level, each rule, the worst
// rank deciding, summing over rounds, and the figures' round trip through a /rounds row.
#include <gtest/gtest.h>

#include "cmlbed/run/emulation_verdict.hpp"

using cmlbed::run::Emulation;
using cmlbed::run::RankFidelity;

namespace {

RankFidelity paced(double held_s, double overrun_s, double overran = 1, double stages = 10) {
  RankFidelity f;
  f.paced_stages = stages;
  f.paced_overran = overrun_s > 0 ? overran : 0;
  f.paced_s = held_s;
  f.paced_overrun_s = overrun_s;
  f.paced_worst_ratio = overrun_s > 0 ? 2.0 : 0.0;
  return f;
}

RankFidelity unpaced(double cpu_s, double runqueue_s) {
  RankFidelity f;
  f.cpu_s = cpu_s;
  f.runqueue_s = runqueue_s;
  return f;
}

}  // namespace

TEST(EmulationVerdict, OverrunWeighedAgainstHeldTime) {
  // The main job's sfl devices: a third of the stages overran, by 7 ms of 11 s: faithful.
  auto v = cmlbed::run::judge_emulation({unpaced(1, 0), paced(11.0, 0.007, 30, 90)}, 12.0);
  EXPECT_EQ(v.level, Emulation::faithful);
  EXPECT_TRUE(v.reasons.empty());
  v = cmlbed::run::judge_emulation({unpaced(1, 0), paced(10.0, 0.5)}, 12.0);  // 5%
  EXPECT_EQ(v.level, Emulation::degraded);
  ASSERT_EQ(v.reasons.size(), 1u);
  EXPECT_NE(v.reasons[0].find("device 1"), std::string::npos) << v.reasons[0];
  EXPECT_NE(v.reasons[0].find("5.00%"), std::string::npos) << v.reasons[0];
  v = cmlbed::run::judge_emulation({unpaced(1, 0), paced(0.01, 3.9, 40, 40)}, 4.0);  // every stage, by seconds
  EXPECT_EQ(v.level, Emulation::broken);
  EXPECT_EQ(v.text().rfind("broken: held stages ran past", 0), 0u) << v.text();
}

TEST(EmulationVerdict, UnpacedRanksJudgedByRunQueueWait) {
  EXPECT_EQ(cmlbed::run::judge_emulation({unpaced(5, 0.1), paced(5, 0)}, 10.0).level, Emulation::faithful);  // 1%
  EXPECT_EQ(cmlbed::run::judge_emulation({unpaced(5, 0.5), paced(5, 0)}, 10.0).level, Emulation::degraded);  // 5%
  const auto v = cmlbed::run::judge_emulation({unpaced(5, 2.0), paced(5, 0)}, 10.0, "localhost: 6 ranks on 2 cores (0-1)");
  EXPECT_EQ(v.level, Emulation::broken);  // 20%
  ASSERT_EQ(v.reasons.size(), 1u);
  EXPECT_NE(v.reasons[0].find("server waited for a core"), std::string::npos) << v.reasons[0];
  EXPECT_NE(v.reasons[0].find("6 ranks on 2 cores"), std::string::npos) << v.reasons[0];
  // A paced rank's run-queue wait is judged through its overrun, not by itself.
  RankFidelity waited = paced(5, 0);
  waited.runqueue_s = 5;
  EXPECT_EQ(cmlbed::run::judge_emulation({unpaced(5, 0), waited}, 10.0).level, Emulation::faithful);
}

TEST(EmulationVerdict, WorstRankAndRuleDecideAndComeFirst) {
  RankFidelity stolen = unpaced(1, 0);
  stolen.host_steal = 0.08;
  const auto v = cmlbed::run::judge_emulation({stolen, paced(10, 0.3), paced(10, 2.0), paced(10, 0)}, 10.0);
  EXPECT_EQ(v.level, Emulation::broken);
  ASSERT_EQ(v.reasons.size(), 2u);
  EXPECT_NE(v.reasons[0].find("device 1, device 2 (device 2: 2 s past 10 s held, 20.0%"), std::string::npos)
      << v.reasons[0];
  EXPECT_NE(v.reasons[1].find("stole 8.00%"), std::string::npos) << v.reasons[1];
}

TEST(EmulationVerdict, RoundsSumAndRoundTripThroughTheRow) {
  cmlbed::trace::RoundRecord a, b;
  a.wall_s = 2;
  b.wall_s = 3;
  cmlbed::run::record_fidelity(a, {unpaced(1, 0.01), paced(2, 0.5)}, "");
  cmlbed::run::record_fidelity(b, {unpaced(1, 0.02), paced(3, 0)}, "");
  EXPECT_EQ(a.emulation, static_cast<int>(Emulation::broken));  // 25% in its own round
  EXPECT_EQ(b.emulation, static_cast<int>(Emulation::faithful));
  double wall = 0;
  const auto total = cmlbed::run::fidelity_of({a, b}, wall);
  EXPECT_DOUBLE_EQ(wall, 5);
  ASSERT_EQ(total.size(), 2u);
  EXPECT_DOUBLE_EQ(total[1].paced_s, 5);
  EXPECT_DOUBLE_EQ(total[1].paced_overrun_s, 0.5);
  EXPECT_DOUBLE_EQ(total[0].runqueue_s, 0.03);
  EXPECT_EQ(cmlbed::run::run_emulation_verdict({a, b}, "").level, Emulation::degraded);  // 10% over the run
  const auto values = cmlbed::run::fidelity_values(total[1]);
  ASSERT_EQ(values.size(), cmlbed::run::kFidelityValues);
  EXPECT_DOUBLE_EQ(cmlbed::run::fidelity_from_values(values, 0).paced_overrun_s, 0.5);
  EXPECT_THROW(cmlbed::run::fidelity_from_values(values, 1), std::invalid_argument);
  // A simulated row has no figures: not judged, and no rank in the totals.
  cmlbed::trace::RoundRecord simulated;
  EXPECT_TRUE(cmlbed::run::fidelity_of(simulated).empty());
  EXPECT_EQ(simulated.emulation, -1);
}
