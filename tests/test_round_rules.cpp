// The round-sequence rules a resumed run is checked against (plan/round_rules.hpp).
#include <gtest/gtest.h>

#include "cmlbed/sim/round_rules.hpp"

namespace cmlbed::sim {
namespace {

TEST(RoundRules, MoreRoundsChangeADoneRoundOnlyWhereTheOldLastAveragedForBeingLast) {
  RoundSequence fl;
  fl.averages = true;
  fl.aggregate_every = 3;
  // 2 rounds done of 2: round 2 averaged as the last, a 3-round run would not average it.
  EXPECT_EQ(first_round_run_otherwise(fl, 2, 3, 2).round, 1);
  EXPECT_TRUE(first_round_run_otherwise(fl, 2, 3, 2).averaging);
  // 6 of 6: the last averaged anyway (every 3rd), so 9 rounds change nothing done.
  EXPECT_EQ(first_round_run_otherwise(fl, 6, 9, 6).round, -1);
  // Stopped after 1 of 2 (checkpoint before the last): going to 3 changes nothing done.
  EXPECT_EQ(first_round_run_otherwise(fl, 2, 3, 1).round, -1);
  fl.aggregate_every = 1;  // every round averages
  EXPECT_EQ(first_round_run_otherwise(fl, 2, 5, 2).round, -1);
}

TEST(RoundRules, AdaSplitsLocalPhaseMustEndAtTheSameRoundAmongTheDoneOnes) {
  RoundSequence ada;
  ada.local_phase = true;
  ada.local_fraction = 0.6;
  EXPECT_EQ(adasplit_local_rounds(0.6, 10), 6);  // not 5 for 0.6 being inexact
  // 10 rounds done (6 local) going to 20 (12 local): round 7 was global, would be local.
  EXPECT_EQ(first_round_run_otherwise(ada, 10, 20, 10).round, 6);
  EXPECT_FALSE(first_round_run_otherwise(ada, 10, 20, 10).averaging);
  // Stopped after 5 local rounds: local under both counts.
  EXPECT_EQ(first_round_run_otherwise(ada, 10, 20, 5).round, -1);
  ada.local_fraction = 0;  // no local phase at all
  EXPECT_EQ(first_round_run_otherwise(ada, 10, 20, 10).round, -1);
}

}  // namespace
}  // namespace cmlbed::sim
