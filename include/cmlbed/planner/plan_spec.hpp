#pragma once
// What the planning area needs to know of a configuration, derived from it once
// (plan_spec): the profiler, the simulator's input, the parameter search and the
// re-planner read these fields and never an option's name, as net, data and model take
// their own specs (setup/derived.hpp). The programs (cli/) derive it and pass it on. The
// one part of planning that names options is auto_plan.cpp, which reads the autos from
// the settings and writes the choice back into them (model.split, pipar.micro_batches,
// plan.profile, plan.replan).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cmlbed/config/settings.hpp"
#include "cmlbed/config/methods.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/net/link.hpp"
#include "cmlbed/net/placement.hpp"
#include "cmlbed/train/adasplit_costs.hpp"
#include "cmlbed/train/training_settings.hpp"

namespace cmlbed::planner {

// One device's settings (its [device.K] values where it has them, else the global ones).
struct DevicePlanSpec {
  std::size_t split = 0;    // model.split (auto: plan.min_split, a placeholder)
  int micro_batches = 1;    // pipar.micro_batches (auto: 1, a placeholder)
  bool split_auto = false, micro_batches_auto = false;  // left to the planner
  net::LinkSpec uplink, downlink;
  double slowdown = 1;                     // devices.slowdown
  std::optional<double> flops_per_second;  // devices.flops (paced), none: timed by the profile
};

struct PlanSpec {
  const MethodTraits* method = nullptr;      // experiment.method's row of the method table
  train::TrainingSettings training;          // model options, batch size, optimizer, seed, rounds, averaging
  std::vector<model::LayerStats> stats;      // the model's layers (building them is most of a plan's cost)
  std::string model_name, dataset_name;      // model.name, data.dataset (a profile must match them)
  std::size_t min_split = 0;                 // plan.min_split
  std::int64_t min_micro_batch = 1;          // pipar.min_micro_batch, samples
  bool replans = false;                      // plan.replan = on_change
  bool personalised = false;                 // train.personalised
  bool devices_set_apart = false;            // some [device.K] section overrides a setting
  int server_threads = 1, device_threads = 1, server_streams = 1;
  int host_cores = 0;                        // plan.host_cores, resolved (0: a core per rank)
  std::string host_text;                     // how: "4 ranks on 2 cores (plan.host_cores = placement)"
  std::int64_t host_slice_ns = 0;            // plan.host_slice
  std::int64_t sl_batches_per_turn = 0;      // sl.batches_per_turn
  std::optional<train::AdaSplitSettings> adasplit;  // a method with a local phase
  std::int64_t upload_every = 1, head_hidden = 0;  // localloss.upload_every, localloss.head_hidden
  std::optional<std::int64_t> tail;                // ushaped.tail (none: the last layer)
  std::vector<DevicePlanSpec> devices;       // index d-1

  const MethodTraits& traits() const { return *method; }
};

// The spec of `config` for `devices` devices (devices without a [device.K] section take
// the [devices] and [network] defaults, as `cmlbed simulate --devices N` needs).
// plan.host_cores = placement takes `placement_cores` where the caller knows the run's
// placement (placement_host_cores), else the devices and the server on this process's
// usable cores (cmlbed plan and simulate, before any mpirun).
PlanSpec plan_spec(const Settings& settings, int devices, std::optional<int> placement_cores = std::nullopt);

// The cores the simulator's one shared host has for a run placed on `nodes` (all ranks
// of the run): one host, its cores; several, 0 (a core per rank) where each host has a
// core per rank, else the most crowded host's share scaled to every rank (the simulator
// models one host: a run crowded on some hosts only is approximated).
int placement_host_cores(const std::vector<net::NodeShare>& nodes);

}  // namespace cmlbed::planner
