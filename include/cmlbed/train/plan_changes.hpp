#pragma once
// What the round loop asks after each round when the plan may change (plan.replan =
// on_change). The planner that answers sits above train (planner::Replanner); the loop
// knows only this question, so that train never depends on planning.
#include <mpi.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "cmlbed/train/replan_table.hpp"
#include "cmlbed/train/device_choice.hpp"

namespace cmlbed::train {

class PlanChanges {
 public:
  virtual ~PlanChanges();  // defined in plan_changes.cpp: the vtable lives in one unit

  struct Outcome {
    bool checked = false;                              // the planner ran (rank 0 added rows)
    std::optional<std::vector<DeviceChoice>> adopted;  // the new plan, on every rank
  };
  // Collective on `comm`, after round `round` (0-based) and its evaluation.
  // `links_elapsed_ns`: how long the links have run (the server's figure counts).
  virtual Outcome after_round(int round, std::int64_t links_elapsed_ns, MPI_Comm comm) = 0;

  // The server's checks so far, for the results file.
  virtual const ReplanTable& table() const = 0;
};

}  // namespace cmlbed::train
