#include "cmlbed/planning/plan_spec.hpp"

#include "cmlbed/setup/derived.hpp"

namespace cmlbed::planning {

PlanSpec plan_spec(const Config& config, int devices) {
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
  spec.host_cores = static_cast<int>(config.integer("plan.host_cores"));
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

}  // namespace cmlbed::planning
