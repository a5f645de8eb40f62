#pragma once
// What happens after each round, outside its timed work: re-planning, the progress line
// and checkpoints hook into the round loop (round_loop.cpp) here, each on its own.
#include <cstdint>

#include "cmlbed/train/plan_changes.hpp"
#include "run_state.hpp"

namespace cmlbed::run {

class RoundHook {
 public:
  virtual ~RoundHook() = default;
  // Every rank, after the round's evaluation and before its events are collected, so
  // that what the hook sends goes with this round's events; the transport is not
  // counting (no round's traffic).
  virtual void after_evaluation(RunState& /*run*/, const RoundContext& /*context*/) {}
  // Every rank, once rank 0 has recorded the round in the results file.
  virtual void after_recorded(RunState& /*run*/, int /*round*/) {}
};

// plan.replan = on_change: asks the replanner after every round whether to change the
// plan, applies an adopted one, and keeps the replans table in the results file.
class ReplanHook : public RoundHook {
 public:
  explicit ReplanHook(PlanChanges& replanner) : replanner_(replanner) {}
  void after_evaluation(RunState& run, const RoundContext& context) override;
  void after_recorded(RunState& run, int round) override;

 private:
  PlanChanges& replanner_;
  bool checked_ = false;  // this round's check ran: its row goes into the file
};

// output.progress: rank 0's line per round.
class ProgressPrinter : public RoundHook {
 public:
  void after_recorded(RunState& run, int round) override;
};

// output.checkpoint: after every N rounds and the last, each rank's state after the
// round; and at a stop between rounds.
class Checkpointer : public RoundHook {
 public:
  explicit Checkpointer(RunState& run);
  void after_recorded(RunState& run, int round) override;
  // A stop at a round boundary: every rank's state is the one after the last round.
  void on_stop(RunState& run, int stopped_in, bool mid_round);
  // Rounds complete at the last checkpoint this run can continue from.
  int checkpointed() const { return checkpointed_; }

 private:
  void write(RunState& run, int rounds_complete);
  CheckpointTarget target_;  // read on rank 0 only
  int checkpointed_;
};

}  // namespace cmlbed::run
