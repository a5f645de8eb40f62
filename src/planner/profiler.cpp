#include "cmlbed/planner/profiler.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>

#include "cmlbed/model/split_model.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/net/gather.hpp"
#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/wait_politely.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/base/run_stamp.hpp"
#include "cmlbed/train/local_training.hpp"
#include "cmlbed/train/tensor_codec.hpp"
#include "cmlbed/version.hpp"

namespace cmlbed::planner {

using train::TrainingSettings;
using train::make_optimizer;
using train::weighted_average;
using train::tensor_payload;
using train::tensor_from;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Median seconds of `timed` over settings.repeats runs, after settings.warmup untimed
// ones; `prepare` runs untimed before each.
double measure(const ProfilerSettings& settings, const std::function<void()>& prepare,
               const std::function<void()>& timed) {
  std::vector<double> seconds;
  for (int run = 0; run < settings.warmup + settings.repeats; ++run) {
    prepare();
    const auto start = std::chrono::steady_clock::now();
    timed();
    const double took = seconds_since(start);
    if (run >= settings.warmup) seconds.push_back(took);
  }
  return median(seconds);
}

std::vector<std::int64_t> with_batch(std::int64_t batch, const std::vector<std::int64_t>& sample_shape) {
  std::vector<std::int64_t> shape{batch};
  shape.insert(shape.end(), sample_shape.begin(), sample_shape.end());
  return shape;
}

// Forward and backward seconds of every layer on a batch of `batch` samples, each the
// median over settings.repeats passes through the whole model (after settings.warmup
// untimed ones), timed inside the pass: every layer takes the output the one before it
// has just made, as in a run's stages (a layer timed alone, over and over on the same
// input, comes out short: docs/explanation/simulator.md, "Why it is timed so").
// Backward: a hook on each layer's input stamps the gradient's arrival there, i.e. the
// end of the layer after it. The model's input takes no gradient, like a device's;
// every later layer's input does, like a server part's (also after layers without
// parameters, whose outputs would not ask for one).
std::vector<std::pair<double, double>> time_layers(std::vector<std::unique_ptr<model::ModelPart>>& layers,
                                                   const std::vector<std::int64_t>& input_shape, std::int64_t batch,
                                                   const ProfilerSettings& settings) {
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double>(to - from).count();
  };
  const std::size_t count = layers.size();
  std::vector<std::vector<double>> forward(count), backward(count);
  for (int run = 0; run < settings.warmup + settings.repeats; ++run) {
    std::vector<Clock::time_point> gradient_at(count);  // [l]: the gradient of layer l's input arrived
    torch::Tensor x = torch::randn(with_batch(batch, input_shape));
    std::vector<double> forward_s(count);
    Clock::time_point t = Clock::now();
    for (std::size_t l = 0; l < count; ++l) {
      x = layers[l]->forward(x);
      const Clock::time_point done = Clock::now();
      forward_s[l] = seconds(t, done);
      if (l + 1 < count) {
        if (!x.requires_grad()) x.requires_grad_(true);
        x.register_hook([&gradient_at, l](const torch::Tensor&) { gradient_at[l + 1] = Clock::now(); });
      }
      t = Clock::now();
    }
    if (!x.requires_grad()) {
      throw std::logic_error("profile: the model's output needs no gradient (no layer has parameters?)");
    }
    const torch::Tensor seed = torch::ones_like(x);
    const Clock::time_point start = Clock::now();
    x.backward(seed);
    const Clock::time_point end = Clock::now();
    if (run < settings.warmup) continue;
    for (std::size_t l = 0; l < count; ++l) {
      const Clock::time_point began = l + 1 < count ? gradient_at[l + 1] : start;
      const Clock::time_point ended = l > 0 ? gradient_at[l] : end;
      forward[l].push_back(forward_s[l]);
      backward[l].push_back(seconds(began, ended));
    }
  }
  std::vector<std::pair<double, double>> times;
  for (std::size_t l = 0; l < count; ++l) times.emplace_back(median(forward[l]), median(backward[l]));
  return times;
}

// Seconds of every layer's optimizer step (step and zero_grad, as the runtime's step
// stage; 0 for a layer without parameters), each the median over settings.repeats
// passes, timed right after a forward and backward of the whole model on `batch`
// samples: a run's step follows its mini-batch's backwards, which leave the caches to
// their activations, so a step timed over and over with nothing between comes out
// several times short (docs/explanation/simulator.md, "Why it is timed so").
std::vector<double> time_steps(std::vector<std::unique_ptr<model::ModelPart>>& layers,
                               const std::vector<std::int64_t>& input_shape, std::int64_t batch,
                               const TrainingSettings& training, const ProfilerSettings& settings) {
  std::vector<std::unique_ptr<torch::optim::Optimizer>> optimizers;
  for (auto& layer : layers) optimizers.push_back(make_optimizer(*layer, training));
  std::vector<std::vector<double>> seconds(layers.size());
  for (int run = 0; run < settings.warmup + settings.repeats; ++run) {
    torch::Tensor x = torch::randn(with_batch(batch, input_shape));
    for (auto& layer : layers) x = layer->forward(x);
    x.backward(torch::ones_like(x));
    for (std::size_t l = 0; l < layers.size(); ++l) {
      if (!optimizers[l]) continue;
      const auto start = std::chrono::steady_clock::now();
      optimizers[l]->step();
      optimizers[l]->zero_grad();  // zeroes the gradients (LibTorch 1.13): the next backward adds into them
      const double took = seconds_since(start);
      if (run >= settings.warmup) seconds[l].push_back(took);
    }
  }
  std::vector<double> medians;
  for (auto& values : seconds) medians.push_back(values.empty() ? 0.0 : median(values));
  return medians;
}

// A training step as the runtime's stages make it, over what the profile's layers add
// up to: forward and loss, backward, every optimizer's step and zero_grad, back to back
// on `batch` samples, the mean over 3 x settings.repeats steps, divided by
// `layers_s` (the layers' forward, backward and step medians at that size, summed).
// The layers are timed one by one inside a pass, at their medians; a run's stage also
// pays for the loss, the dispatch around the layers, and the host's slow steps, and a
// round adds its stages up, so the mean counts (what the factor comes to:
// docs/explanation/simulator.md, "Why it is timed so").
double time_stage_factor(std::vector<std::unique_ptr<model::ModelPart>>& layers,
                         const std::vector<std::int64_t>& input_shape, std::int64_t batch,
                         const TrainingSettings& training, const ProfilerSettings& settings, double layers_s) {
  if (layers_s <= 0) return 1.0;
  std::vector<std::unique_ptr<torch::optim::Optimizer>> optimizers;
  for (auto& layer : layers) optimizers.push_back(make_optimizer(*layer, training));
  const torch::Tensor input = torch::randn(with_batch(batch, input_shape));
  const torch::Tensor labels = torch::randint(training.model.classes, {batch}, torch::kLong);
  double sum = 0;
  int timed = 0;
  for (int run = 0; run < settings.warmup + 3 * settings.repeats; ++run) {
    const auto start = std::chrono::steady_clock::now();
    torch::Tensor x = input;
    for (auto& layer : layers) x = layer->forward(x);
    train::batch_loss(x, labels, batch).backward();
    for (auto& optimizer : optimizers) {
      if (!optimizer) continue;
      optimizer->step();
      optimizer->zero_grad();
    }
    const double took = seconds_since(start);
    if (run < settings.warmup) continue;
    sum += took;
    ++timed;
  }
  return timed == 0 ? 1.0 : sum / timed / layers_s;
}

// How much longer a forward pass of the whole model on `batch` samples takes right after
// its thread slept than right after another pass: the median difference over
// 3 x settings.repeats interleaved pairs (0 if negative). A run's stages often start
// after a sleep (a wait for a message, a slowdown's stretch, pacing), and a thread that
// slept comes back to cold caches, so such a stage takes longer than the layers' medians
// say (docs/explanation/simulator.md, "Why it is timed so").
double time_wake_up(std::vector<std::unique_ptr<model::ModelPart>>& layers, const std::vector<std::int64_t>& input_shape,
                    std::int64_t batch, const ProfilerSettings& settings) {
  constexpr auto kSleep = std::chrono::milliseconds(5);
  const torch::Tensor input = torch::randn(with_batch(batch, input_shape));
  const auto pass = [&] {
    const auto start = std::chrono::steady_clock::now();
    torch::Tensor x = input;
    for (auto& layer : layers) x = layer->forward(x);
    return seconds_since(start);
  };
  std::vector<double> differences;
  for (int run = 0; run < settings.warmup + 3 * settings.repeats; ++run) {
    pass();
    const double back_to_back = pass();
    std::this_thread::sleep_for(kSleep);
    const double after_sleep = pass();
    if (run >= settings.warmup) differences.push_back(after_sleep - back_to_back);
  }
  return std::max(0.0, median(differences));
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

// What a rank's profile says of its settings, before anything is measured.
sim::RankProfile rank_settings(const PlanSpec& spec, int rank) {
  const bool is_server = rank == 0;
  sim::RankProfile profile;
  profile.rank = rank;
  profile.measured_by = rank;
  profile.role = is_server ? "server" : "device";
  profile.threads = is_server ? spec.server_threads : spec.device_threads;
  if (is_server) return profile;
  const DevicePlanSpec& device = spec.devices.at(static_cast<std::size_t>(rank - 1));
  profile.slowdown = device.slowdown;
  profile.flops_per_second = device.flops_per_second.value_or(0.0);
  return profile;
}

// For every rank, the rank that measures for it: the lowest rank on the same host with
// the same thread count. Collective over `comm`.
std::vector<int> measuring_ranks(const PlanSpec& spec, int rank, MPI_Comm comm) {
  const std::string kind = host_name() + "/" + std::to_string(rank_settings(spec, rank).threads);
  const int size = net::comm_size(comm);
  std::vector<std::string> kinds(static_cast<std::size_t>(size));
  net::gather_blobs(kind, comm, [&](int from, const std::string& theirs) { kinds[static_cast<std::size_t>(from)] = theirs; });
  std::vector<int> measured_by;
  for (const std::string& k : kinds) {
    measured_by.push_back(static_cast<int>(std::find(kinds.begin(), kinds.end(), k) - kinds.begin()));
  }
  CMLBED_MPI_CHECK(MPI_Bcast(measured_by.data(), size, MPI_INT, 0, comm));
  return measured_by;
}

sim::RankProfile profile_this_rank(const PlanSpec& spec, int rank,
                                    const std::vector<std::int64_t>& sizes, const ProfilerSettings& settings) {
  const auto started = std::chrono::steady_clock::now();
  sim::RankProfile profile = rank_settings(spec, rank);
  model::set_intra_op_threads(profile.threads);

  const TrainingSettings& training = spec.training;
  const std::vector<model::LayerStats>& stats = spec.stats;
  const ImageShape in = training.model.input;
  const std::vector<std::int64_t> sample_shape{in.channels, in.height, in.width};
  std::int64_t total_parameters = 0;
  std::vector<std::unique_ptr<model::ModelPart>> layers;
  for (std::size_t i = 0; i < stats.size(); ++i) {
    sim::LayerProfile layer;
    layer.name = stats[i].name;
    layer.parameters = stats[i].parameters;
    layer.flops_per_sample = stats[i].flops_per_sample;
    layer.output_bytes_per_sample = stats[i].activation_bytes_per_sample;
    total_parameters += stats[i].parameters;
    profile.layers.push_back(std::move(layer));
    layers.push_back(std::make_unique<model::ModelPart>(training.model, i, i + 1, training.seed));
    layers.back()->train();
  }
  for (const std::int64_t batch : sizes) {
    const auto times = time_layers(layers, sample_shape, batch, settings);
    for (std::size_t i = 0; i < layers.size(); ++i) {
      profile.layers[i].forward_s.push_back(times[i].first);
      profile.layers[i].backward_s.push_back(times[i].second);
    }
  }
  const auto steps = time_steps(layers, sample_shape, sizes.back(), training, settings);
  for (std::size_t i = 0; i < layers.size(); ++i) profile.layers[i].step_s = steps[i];
  profile.wake_s = time_wake_up(layers, sample_shape, sizes[std::min<std::size_t>(2, sizes.size() - 1)], settings);
  double layers_s = 0;
  for (const sim::LayerProfile& layer : profile.layers) {
    layers_s += layer.forward_s.back() + layer.backward_s.back() + layer.step_s;
  }
  profile.stage_factor = time_stage_factor(layers, sample_shape, sizes.back(), training, settings, layers_s);

  // Averaging as the runtime's aggregate stages do it (weighted_average: each copy
  // widened to float64 and added, the sum divided and narrowed), over kCopies flat copies
  // of the model's weights; per parameter and copy. A cheaper stand-in (a float32 add)
  // is many times short (docs/explanation/simulator.md, "Why it is timed so").
  constexpr int kCopies = 4;
  const std::int64_t values = std::max<std::int64_t>(total_parameters, 1);
  std::vector<torch::Tensor> copies;
  for (int c = 0; c < kCopies; ++c) copies.push_back(torch::randn({values}));
  const std::vector<double> weights(kCopies, 1.0);
  profile.aggregate_s_per_parameter =
      measure(settings, [] {}, [&] { (void)weighted_average(copies, weights); }) / static_cast<double>(kCopies * values);

  // A 4 MiB activation into a message and back.
  const torch::Tensor activation = torch::randn({16, 1 << 16});
  profile.codec_s_per_byte = measure(settings, [] {}, [&] {
                               net::Message message;
                               message.payload = tensor_payload(activation, message.header);
                               (void)tensor_from(message);
                             }) /
                             static_cast<double>(activation.nbytes());
  profile.seconds = seconds_since(started);
  return profile;
}

// Forward + backward of every layer at `batch` from `rank`'s measured sizes.
double interpolated_total(const sim::Profile& profile, const sim::RankProfile& rank, std::int64_t batch) {
  double total = 0;
  for (const sim::LayerProfile& layer : rank.layers) {
    total += sim::at_batch_size(profile.batch_sizes, layer.forward_s, static_cast<double>(batch)) +
             sim::at_batch_size(profile.batch_sizes, layer.backward_s, static_cast<double>(batch));
  }
  return total;
}

// Measures a size between two profiled ones on the server and compares it with the
// interpolation (the profile states its own error).
sim::InterpolationCheck check_interpolation(const PlanSpec& spec,
                                             const sim::Profile& profile, const ProfilerSettings& settings) {
  const auto& sizes = profile.batch_sizes;
  const std::int64_t batch = sizes.size() >= 2 ? (sizes[sizes.size() - 2] + sizes.back() + 1) / 2 : sizes.back();
  model::set_intra_op_threads(spec.server_threads);
  const sim::RankProfile measured = profile_this_rank(spec, 0, {batch}, settings);
  double measured_total = 0;
  for (const sim::LayerProfile& layer : measured.layers) measured_total += layer.forward_s[0] + layer.backward_s[0];
  return {batch, measured_total, interpolated_total(profile, profile.ranks[0], batch)};
}

// The profile's description of what was measured, without the ranks.
sim::Profile profile_header(const PlanSpec& spec,
                             const ProfilerSettings& settings) {
  sim::Profile profile;
  profile.model = spec.model_name;
  profile.dataset = spec.dataset_name;
  profile.optimizer = spec.training.optimizer;
  profile.batch_sizes = profiled_batch_sizes(spec.training.batch_size, model::min_training_batch(spec.stats));
  profile.warmup = settings.warmup;
  profile.repeats = settings.repeats;
  profile.measured_at = now_stamp().iso;
  profile.host = host_name();
  profile.cmlbed_version = std::string(kVersion) + " (" + kGitRevision + ")";
  return profile;
}

}  // namespace

std::vector<std::int64_t> profiled_batch_sizes(std::int64_t batch, std::int64_t smallest) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t size = smallest; size < batch; size *= 2) sizes.push_back(size);
  sizes.push_back(batch);
  return sizes;
}

sim::Profile profile_in_process(const PlanSpec& spec, const ProfilerSettings& settings) {
  const auto started = std::chrono::steady_clock::now();
  sim::Profile profile = profile_header(spec, settings);
  profile.ranks.push_back(profile_this_rank(spec, 0, profile.batch_sizes, settings));
  profile.ranks.push_back(profile_this_rank(spec, 1, profile.batch_sizes, settings));
  profile.interpolation_checks.push_back(check_interpolation(spec, profile, settings));
  profile.seconds = seconds_since(started);
  return profile;
}

sim::Profile profile_ranks(const PlanSpec& spec, MPI_Comm comm, const ProfilerSettings& settings) {
  const int rank = net::comm_rank(comm), size = net::comm_size(comm);
  if (spec.devices.size() + 1 != static_cast<std::size_t>(size)) {
    throw std::invalid_argument("profile: the plan has " + std::to_string(spec.devices.size()) +
                                " device(s) but MPI started " + std::to_string(size) +
                                " rank(s); start one rank per device plus the server");
  }
  const auto started = std::chrono::steady_clock::now();
  sim::Profile profile = profile_header(spec, settings);

  // Ranks that would measure the same thing (same host, same threads: the times are
  // this machine's, not stretched by slowdown or paced) share one measurement; the first
  // rank of each kind measures, one at a time, while the others wait without spinning.
  const std::vector<int> measured_by = measuring_ranks(spec, rank, comm);
  std::string mine;
  for (int turn = 0; turn < size; ++turn) {
    if (turn == rank && measured_by[static_cast<std::size_t>(rank)] == rank) {
      mine = sim::to_json(profile_this_rank(spec, rank, profile.batch_sizes, settings)).dump();
    }
    if (measured_by[static_cast<std::size_t>(turn)] == turn) net::barrier_politely(comm);
  }
  // The measurements to rank 0, each rank's own settings on its measurer's figures, then
  // the whole profile back to every rank.
  std::vector<nlohmann::ordered_json> measured(static_cast<std::size_t>(size));
  net::gather_blobs(mine, comm, [&](int from, const std::string& bytes) {
    if (!bytes.empty()) measured[static_cast<std::size_t>(from)] = nlohmann::ordered_json::parse(bytes);
  });
  std::string whole;
  if (rank == 0) {
    nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
    for (int r = 0; r < size; ++r) {
      const int by = measured_by[static_cast<std::size_t>(r)];
      nlohmann::ordered_json entry = measured[static_cast<std::size_t>(by)];
      const sim::RankProfile own = rank_settings(spec, r);
      entry["rank"] = r;
      entry["role"] = own.role;
      entry["slowdown"] = own.slowdown;
      entry["flops_per_second"] = own.flops_per_second;
      entry["measured_by"] = by;
      if (by != r) entry["seconds"] = 0.0;
      ranks.push_back(std::move(entry));
    }
    nlohmann::ordered_json json = sim::to_json(profile);
    json["ranks"] = std::move(ranks);
    profile = sim::profile_from_json(json);
    if (settings.check_interpolation) {
      profile.interpolation_checks.push_back(check_interpolation(spec, profile, settings));
    }
    profile.seconds = seconds_since(started);
    whole = sim::to_json(profile).dump();
  }
  long long length = static_cast<long long>(whole.size());
  CMLBED_MPI_CHECK(MPI_Bcast(&length, 1, MPI_LONG_LONG, 0, comm));
  whole.resize(static_cast<std::size_t>(length));
  CMLBED_MPI_CHECK(MPI_Bcast(whole.data(), static_cast<int>(length), MPI_CHAR, 0, comm));
  return sim::profile_from_json(nlohmann::json::parse(whole));
}

}  // namespace cmlbed::planner
