#include "cmlbed/planner/plan_spec.hpp"

#include <algorithm>
#include <cmath>

#include "cmlbed/base/cpu_usage.hpp"
#include "cmlbed/setup/derived.hpp"

namespace cmlbed::planner {

int placement_host_cores(const std::vector<net::NodeShare>& nodes) {
  std::size_t ranks = 0;
  for (const net::NodeShare& node : nodes) ranks += node.ranks.size();
  if (nodes.size() == 1) return static_cast<int>(nodes.front().cpus.size());
  const double crowded = net::most_ranks_per_core(nodes);
  if (crowded <= 1) return 0;
  return std::max(1, static_cast<int>(std::lround(static_cast<double>(ranks) / crowded)));
}

PlanSpec plan_spec(const Config& config, int devices, std::optional<int> placement_cores) {
  PlanSpec spec;
  spec.method = &method_traits(config.text("experiment.method"));
  spec.training = train::training_settings(config);
  spec.stats = model::layer_stats(spec.training.model);
  spec.model_name = config.text("model.name");
  spec.dataset_name = config.text("data.dataset");
  spec.min_split = static_cast<std::size_t>(config.integer("plan.min_split"));
  spec.min_micro_batch = config.integer("pipar.min_micro_batch");
  spec.replans = config.text("plan.replan") == "on_change";
  spec.personalised = config.flag("train.personalised");
  spec.devices_set_apart = !config.device_overrides().empty();
  spec.server_threads = static_cast<int>(config.integer("train.server_threads"));
  spec.device_threads = static_cast<int>(config.integer("train.device_threads"));
  spec.server_streams = static_cast<int>(config.integer("train.server_streams"));
  const bool placed = config.text("plan.host_cores") == "placement";
  spec.host_cores = placed ? placement_cores.value_or(static_cast<int>(usable_cpus().size()))
                           : static_cast<int>(config.integer("plan.host_cores"));
  spec.host_text = std::to_string(devices + 1) + " ranks on " +
                   (spec.host_cores == 0 ? std::string("cores of their own")
                                         : std::to_string(spec.host_cores) + " shared cores") +
                   (!placed ? "" : placement_cores ? " as placed" : " of this host") + " (plan.host_cores = " +
                   (placed ? std::string("placement") : std::to_string(spec.host_cores)) + ")";
  spec.host_slice_ns = config.duration_ns("plan.host_slice");
  spec.sl_batches_per_turn = config.integer("sl.batches_per_turn");
  if (spec.method->local_phase) spec.adasplit = train::adasplit_settings(config);
  for (int d = 1; d <= devices; ++d) {
    DevicePlanSpec& device = spec.devices.emplace_back();
    device.split = static_cast<std::size_t>(config.integer("model.split", d));
    device.micro_batches = static_cast<int>(config.integer("pipar.micro_batches", d));
    device.uplink = link_spec(config, d, LinkDirection::uplink);
    device.downlink = link_spec(config, d, LinkDirection::downlink);
    device.slowdown = config.real("devices.slowdown", d);
    device.flops_per_second = config.compute_rate_flops("devices.flops", d);
  }
  return spec;
}

}  // namespace cmlbed::planner
