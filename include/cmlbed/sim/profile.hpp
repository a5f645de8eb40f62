#pragma once
// A profile: what each rank measured of its share of the work (`cmlbed profile`), the
// input of the schedule simulator and of automated parameter selection. Per layer of
// the configured model: forward and backward seconds at several batch sizes, the
// optimizer step over the layer's parameters, and exact sizes from the model zoo
// (float32 activations); per rank: the cost of averaging models and of turning tensors
// into messages and back. Times are this machine's medians as measured, NOT stretched by
// devices.slowdown or paced by devices.flops: a rank's `slowdown` and `flops_per_second`
// are recorded beside them for whoever applies them.
//
// Stored as JSON (format "cmlbed-profile", version kVersion; docs/explanation/simulator.md), human
// readable; profile_from_json refuses another format, another version or missing fields
// with a message naming the field.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cmlbed::sim {

struct LayerProfile {
  std::string name;
  std::int64_t parameters = 0;
  std::int64_t flops_per_sample = 0;           // forward, from the zoo
  std::int64_t output_bytes_per_sample = 0;    // what a split after this layer sends (and its gradient)
  std::vector<double> forward_s;               // median, one per Profile::batch_sizes
  std::vector<double> backward_s;              // median, including the gradient of the input (not for layer 0)
  double step_s = 0;                           // one optimizer step over this layer's parameters
};

struct RankProfile {
  int rank = 0;
  std::string role;              // "server" or "device"
  int threads = 1;               // LibTorch intra-op threads it measured with
  double slowdown = 1;           // devices.slowdown (1 for the server)
  double flops_per_second = 0;   // devices.flops (0: not set)
  std::vector<LayerProfile> layers;
  double aggregate_s_per_parameter = 0;  // averaging (train::weighted_average), per parameter and model copy
  double codec_s_per_byte = 0;           // a tensor into a message and back
  // What a compute stage takes more when its thread slept just before it (caches, TLB
  // and, on a virtual machine, the halted CPU's wake-up): seconds (JSON: optional, 0).
  double wake_s = 0;
  // A whole training step as the runtime's stages make it (loss, dispatch, the host's
  // slow steps: the mean step) over the sum of the layers' medians at the largest batch
  // size (JSON: optional, 1). The simulator multiplies this rank's compute by it.
  double stage_factor = 1;
  double seconds = 0;                    // this rank's profiling took (0 when it shared)
  int measured_by = 0;                   // the rank whose measurement this is (JSON: optional,
                                         // default: this rank); see planner::profile_ranks
};

// How well piecewise-linear interpolation between the measured batch sizes predicts a
// size that was not measured (each layer's forward + backward summed, server rank).
struct InterpolationCheck {
  std::int64_t batch_size = 0;
  double measured_s = 0;
  double interpolated_s = 0;
};

struct Profile {
  static constexpr int kVersion = 1;
  std::string model;
  std::string dataset;
  std::string optimizer;
  std::vector<std::int64_t> batch_sizes;  // ascending
  int warmup = 0;
  int repeats = 0;
  std::string measured_at;  // ISO 8601 UTC
  std::string host;
  std::string cmlbed_version;
  double seconds = 0;  // wall time of the whole profiling, all ranks in turn
  std::vector<InterpolationCheck> interpolation_checks;
  std::vector<RankProfile> ranks;  // index = rank
};

nlohmann::ordered_json to_json(const Profile& profile);
nlohmann::ordered_json to_json(const RankProfile& rank);
Profile profile_from_json(const nlohmann::json& json);

// Throw std::runtime_error naming the path (and, reading, the field) on failure.
void write_profile(const std::string& path, const Profile& profile);
Profile read_profile(const std::string& path);

// Seconds at `batch` samples from values measured at `batch_sizes` (ascending):
// piecewise linear between them, linear through the last two beyond the largest, and
// proportional below the smallest.
double at_batch_size(const std::vector<std::int64_t>& batch_sizes, const std::vector<double>& seconds,
                     double batch);

}  // namespace cmlbed::sim
