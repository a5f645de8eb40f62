#pragma once
// A profile of a server of known speed, for tests that plan or simulate without measuring
// this host: 1 ns per forward FLOP and sample (1 GFLOP/s), backward twice that, 1 us per
// layer's step, measured at batch sizes 1 and 16. The devices are left out: the tests
// pace them (devices.flops).
#include "cmlbed/config/settings.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/sim/profile.hpp"

namespace cmlbed {

inline sim::Profile known_server_profile(const Settings& settings) {
  sim::Profile profile;
  profile.model = settings.model.name;
  profile.dataset = settings.data.dataset;
  profile.optimizer = settings.train.optimizer;
  profile.batch_sizes = {1, 16};
  profile.measured_at = "2026-12-07T00:00:00Z";
  profile.host = "none: a server of known speed (tests/known_server_profile.hpp)";
  profile.cmlbed_version = "test";
  sim::RankProfile server;
  server.role = "server";
  for (const model::LayerStats& layer : model::layer_stats(model_options(settings))) {
    const double per_sample = static_cast<double>(layer.flops_per_sample) * 1e-9;
    server.layers.push_back({layer.name, layer.parameters, layer.flops_per_sample, layer.activation_bytes_per_sample,
                             {per_sample, 16 * per_sample}, {2 * per_sample, 32 * per_sample}, 1e-6});
  }
  server.aggregate_s_per_parameter = 1e-9;
  profile.ranks = {server};
  return profile;
}

}  // namespace cmlbed
