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

PlanSpec plan_spec(const Settings& settings, int devices, std::optional<int> placement_cores) {
  PlanSpec spec;
  spec.method = &method_traits(settings.experiment.method);
  spec.training = train::training_settings(settings);
  spec.stats = model::layer_stats(spec.training.model);
  spec.model_name = settings.model.name;
  spec.dataset_name = settings.data.dataset;
  spec.min_split = static_cast<std::size_t>(settings.plan.min_split);
  spec.min_micro_batch = settings.pipar.min_micro_batch;
  spec.replans = settings.plan.replan == "on_change";
  spec.personalised = settings.train.personalised;
  spec.devices_set_apart = !settings.config().device_overrides().empty();
  spec.server_threads = static_cast<int>(settings.train.server_threads);
  spec.device_threads = static_cast<int>(settings.train.device_threads);
  spec.server_streams = static_cast<int>(settings.train.server_streams);
  const bool placed = !settings.plan.host_cores;  // placement
  spec.host_cores = placed ? placement_cores.value_or(static_cast<int>(usable_cpus().size()))
                           : static_cast<int>(*settings.plan.host_cores);
  spec.host_text = std::to_string(devices + 1) + " ranks on " +
                   (spec.host_cores == 0 ? std::string("cores of their own")
                                         : std::to_string(spec.host_cores) + " shared cores") +
                   (!placed ? "" : placement_cores ? " as placed" : " of this host") + " (plan.host_cores = " +
                   (placed ? std::string("placement") : std::to_string(spec.host_cores)) + ")";
  spec.host_slice_ns = settings.plan.host_slice.count();
  spec.sl_batches_per_turn = settings.sl.batches_per_turn;
  if (spec.method->local_phase) spec.adasplit = train::adasplit_settings(settings);
  spec.upload_every = settings.localloss.upload_every;
  spec.head_hidden = settings.localloss.head_hidden;
  spec.tail = settings.ushaped.tail;
  for (int d = 1; d <= devices; ++d) {
    DevicePlanSpec& device = spec.devices.emplace_back();
    // An auto leaves a placeholder that trains (the planner chooses the value).
    const Auto<std::int64_t> split = settings.model.split.of(d);
    const Auto<std::int64_t> micro_batches = settings.pipar.micro_batches.of(d);
    device.split_auto = split.is_auto();
    device.micro_batches_auto = micro_batches.is_auto();
    device.split = static_cast<std::size_t>(split.is_auto() ? settings.plan.min_split : split.value());
    device.micro_batches = static_cast<int>(micro_batches.is_auto() ? 1 : micro_batches.value());
    device.uplink = link_spec(settings, d, LinkDirection::uplink);
    device.downlink = link_spec(settings, d, LinkDirection::downlink);
    device.slowdown = settings.devices.slowdown.of(d);
    device.flops_per_second = settings.devices.flops.of(d);
  }
  return spec;
}

}  // namespace cmlbed::planner
