#pragma once
// plan.replan = on_change (docs/explanation/simulator.md, "Re-planning"): the planner's choice made
// again when a rate trace has changed a link. Every plan is made for the links' rates as
// they are when it is made, held from then on (net::held_at): the first before round 1,
// then one after each round in which some link's rate moved, or, when that round did not
// average the models (train.aggregate_every), after the next that does (the model can
// only be cut anew where every copy of it is the average). The new plan is adopted when
// it is predicted at least kReplanGain faster than the plan in force at the new rates
// (re-splitting restarts the optimizers of the devices it moves); Method::apply_plan
// then changes the split points and micro-batch counts on every rank.
#include <mpi.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "cmlbed/sim/profile.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "cmlbed/planner/parameter_search.hpp"
#include "cmlbed/train/device_choice.hpp"
#include "cmlbed/train/plan_changes.hpp"

namespace cmlbed::planner {

using train::DeviceChoice;

constexpr double kReplanGain = 0.01;

// When the first plan (before round 1, or `cmlbed plan`'s) holds the links: at time 0 for
// a run that re-plans, never otherwise (search_plan's links_held_at_ns).
std::optional<std::int64_t> first_plan_links_held_at(const PlanSpec& spec);

class Replanner : public train::PlanChanges {
 public:
  // `spec`: the run's (with the plan in force in place of auto), one entry per device.
  // `plan`: the plan in force, made for the links at time 0. `profile`, `freedom` (what
  // the planner may choose, per device) and `samples` (each device's share of the data,
  // SampleCounts::devices) matter on the server only.
  Replanner(PlanSpec spec, bool is_server, sim::Profile profile, std::vector<DeviceFreedom> freedom,
            std::vector<DeviceChoice> plan, std::vector<std::size_t> samples);

  // Collective on `comm`, after round `round` (0-based) and its evaluation.
  // `links_elapsed_ns`: how long the links have run (the server's figure counts). The
  // server plans and prints one line when it does.
  Outcome after_round(int round, std::int64_t links_elapsed_ns, MPI_Comm comm) override;

  // The server's part of after_round, in one process (`cmlbed simulate`): checks the links
  // after round `round` and plans again when they moved; an adopted plan is in force from
  // then on. Throws std::runtime_error naming the round when planning fails.
  Outcome check(int round, std::int64_t links_elapsed_ns);

  // The server's checks so far, for the results file.
  const train::ReplanTable& table() const override { return table_; }

 private:
  struct Rates {
    std::vector<std::optional<double>> up, down;  // per device (index d-1); nullopt: unshaped
    bool operator==(const Rates& other) const { return up == other.up && down == other.down; }
  };
  Rates rates_at(std::int64_t links_elapsed_ns) const;
  // The server: plans at the present rates, records the check and returns the new plan
  // when it is adopted.
  std::optional<std::vector<DeviceChoice>> plan_again(int round, std::int64_t links_elapsed_ns, const Rates& now);

  PlanSpec spec_;  // the run's (with the plan in force filled in)
  int devices_;
  bool is_server_;
  sim::Profile profile_;
  std::vector<DeviceFreedom> freedom_;
  std::vector<std::size_t> samples_;  // the server's: each device's share of the data
  std::vector<DeviceChoice> plan_;
  Rates planned_for_;
  train::ReplanTable table_;
};

}  // namespace cmlbed::planner
