#pragma once
// run_rounds and finish, the third and fourth phases of a run (run_state.hpp): the rounds
// (round_loop.cpp) and the end of the run (run_finish.cpp).
#include <vector>

#include "round_hooks.hpp"
#include "run_state.hpp"

namespace cmlbed::run {

// Why the rounds ended early: the signal all ranks agreed to stop for (SIGTERM, SIGINT),
// the round it stopped (not recorded) and whether inside it or at its start.
struct Stop {
  int signal = 0;  // 0: every round ran
  int round = 0;
  bool mid_round = false;
};

// The rounds from run.first_round on, each followed by the hooks, in order.
Stop run_rounds(RunState& run, const std::vector<RoundHook*>& hooks);

// A stopped run: its last checkpoint, the file marked and a line on how to continue;
// returns 128 + signal. A complete run: the end-of-run figures, the final model and the
// summary; returns 0.
int finish(RunState& run, const Stop& stop, Checkpointer& checkpointer);

}  // namespace cmlbed::run
