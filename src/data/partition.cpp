#include "cmlbed/data/partition.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <utility>

#include "portable_random.hpp"

namespace cmlbed::data {
namespace {

using Partition = std::vector<std::vector<std::size_t>>;

// Dirichlet draws that leave a device empty are redrawn up to this many times;
// each try costs only classes x devices draws, so a generous bound is cheap.
constexpr int kMaxDirichletTries = 1000;

[[noreturn]] void fail(const std::string& problem) {
  throw std::invalid_argument("partition: " + problem);
}

// --- Random draws (portable helpers in portable_random.hpp). ---

using random::shuffle;
using random::standard_normal;
using random::uniform_open_zero;

// log of a Gamma(shape, 1) draw, by Marsaglia and Tsang. Logarithms because for
// small shapes (strong skew) the draws themselves underflow to zero.
double log_gamma_draw(std::mt19937_64& rng, double shape) {
  if (shape < 1.0) {
    // Gamma(a) = Gamma(a + 1) * U^(1/a).
    return log_gamma_draw(rng, shape + 1.0) + std::log(uniform_open_zero(rng)) / shape;
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double x = standard_normal(rng);
    double v = 1.0 + c * x;
    if (v <= 0.0) continue;
    v = v * v * v;
    const double u = uniform_open_zero(rng);
    if (u < 1.0 - 0.0331 * x * x * x * x ||
        std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) {
      return std::log(d * v);
    }
  }
}

// Proportions ~ Dir(alpha, ..., alpha), unnormalised (apportion normalises).
std::vector<double> dirichlet_weights(std::mt19937_64& rng, double alpha, int devices) {
  std::vector<double> logs(static_cast<std::size_t>(devices));
  for (double& value : logs) value = log_gamma_draw(rng, alpha);
  const double top = *std::max_element(logs.begin(), logs.end());
  std::vector<double> weights;
  weights.reserve(logs.size());
  for (const double value : logs) weights.push_back(std::exp(value - top));
  return weights;
}

// --- Splitting counts. ---

// Splits `total` into integer parts proportional to `weights` (non-negative,
// positive sum) by largest remainders: floors first, then one more to the
// largest fractional parts, ties to the lower index. The parts sum to `total`.
std::vector<std::size_t> apportion(std::size_t total, const std::vector<double>& weights) {
  const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<std::size_t> parts(weights.size());
  std::vector<double> remainders(weights.size());
  std::size_t assigned = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double quota = static_cast<double>(total) * (weights[i] / sum);
    parts[i] = std::min(total - assigned, static_cast<std::size_t>(std::floor(quota)));
    remainders[i] = quota - static_cast<double>(parts[i]);
    assigned += parts[i];
  }
  std::vector<std::size_t> order(weights.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return remainders[a] > remainders[b]; });
  // Rounding error can leave more than one unit per part to hand out; cycling
  // keeps the sum exact regardless.
  for (std::size_t k = 0; assigned < total; k = (k + 1) % order.size(), ++assigned) {
    ++parts[order[k]];
  }
  return parts;
}

// Hands consecutive runs of `items` to devices, `counts[d]` to device d.
void deal(const std::vector<std::size_t>& items, const std::vector<std::size_t>& counts,
          const std::vector<int>& devices, Partition& partition) {
  std::size_t next = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    auto& bucket = partition[static_cast<std::size_t>(devices[i])];
    bucket.insert(bucket.end(), items.begin() + static_cast<std::ptrdiff_t>(next),
                  items.begin() + static_cast<std::ptrdiff_t>(next + counts[i]));
    next += counts[i];
  }
}

std::vector<int> all_devices(int devices) {
  std::vector<int> ids(static_cast<std::size_t>(devices));
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

std::vector<std::vector<std::size_t>> indices_by_class(const std::vector<std::uint8_t>& labels,
                                                       std::int64_t num_classes) {
  std::vector<std::vector<std::size_t>> by_class(static_cast<std::size_t>(num_classes));
  for (std::size_t i = 0; i < labels.size(); ++i) {
    by_class[labels[i]].push_back(i);
  }
  return by_class;
}

// --- The schemes. ---

Partition partition_iid(std::size_t samples, const PartitionSpec& spec, std::mt19937_64& rng) {
  std::vector<double> weights = spec.shares;
  if (weights.empty()) weights.assign(static_cast<std::size_t>(spec.devices), 1.0);
  const std::vector<std::size_t> counts = apportion(samples, weights);
  for (std::size_t d = 0; d < counts.size(); ++d) {
    if (counts[d] == 0) {
      fail("device " + std::to_string(d) + " would get no samples: its share " +
           std::to_string(weights[d]) + " is too small for " + std::to_string(samples) +
           " samples");
    }
  }
  std::vector<std::size_t> order(samples);
  std::iota(order.begin(), order.end(), std::size_t{0});
  shuffle(rng, order);
  Partition partition(static_cast<std::size_t>(spec.devices));
  deal(order, counts, all_devices(spec.devices), partition);
  return partition;
}

Partition partition_dirichlet(const std::vector<std::uint8_t>& labels, std::int64_t num_classes,
                              const PartitionSpec& spec, std::mt19937_64& rng) {
  std::vector<std::vector<std::size_t>> by_class = indices_by_class(labels, num_classes);
  for (auto& members : by_class) shuffle(rng, members);

  const auto devices = static_cast<std::size_t>(spec.devices);
  for (int attempt = 0; attempt < kMaxDirichletTries; ++attempt) {
    std::vector<std::vector<std::size_t>> counts;  // [class][device]
    std::vector<std::size_t> per_device(devices, 0);
    for (const auto& members : by_class) {
      counts.push_back(apportion(members.size(), dirichlet_weights(rng, spec.alpha, spec.devices)));
      for (std::size_t d = 0; d < devices; ++d) per_device[d] += counts.back()[d];
    }
    if (std::find(per_device.begin(), per_device.end(), 0) != per_device.end()) {
      continue;
    }
    Partition partition(devices);
    for (std::size_t c = 0; c < by_class.size(); ++c) {
      deal(by_class[c], counts[c], all_devices(spec.devices), partition);
    }
    return partition;
  }
  fail("dirichlet with alpha " + std::to_string(spec.alpha) + " left some of the " +
       std::to_string(spec.devices) + " devices without samples in " +
       std::to_string(kMaxDirichletTries) + " tries; use a larger alpha or fewer devices");
}

Partition partition_shards(const std::vector<std::uint8_t>& labels, std::int64_t num_classes,
                           const PartitionSpec& spec, std::mt19937_64& rng) {
  const std::int64_t k = spec.classes_per_device;
  if (k < 1 || k > num_classes) {
    fail("shards: classes_per_device is " + std::to_string(k) + ", expected 1.." +
         std::to_string(num_classes));
  }
  if (spec.devices * k < num_classes) {
    fail("shards: " + std::to_string(spec.devices) + " devices x " + std::to_string(k) +
         " classes each cover fewer than the " + std::to_string(num_classes) +
         " classes, so some samples would be unassigned");
  }
  std::vector<std::vector<int>> holders(static_cast<std::size_t>(num_classes));
  for (int d = 0; d < spec.devices; ++d) {
    for (std::int64_t j = 0; j < k; ++j) {
      holders[static_cast<std::size_t>((d * k + j) % num_classes)].push_back(d);
    }
  }
  std::vector<std::vector<std::size_t>> by_class = indices_by_class(labels, num_classes);
  Partition partition(static_cast<std::size_t>(spec.devices));
  for (std::size_t c = 0; c < by_class.size(); ++c) {
    if (by_class[c].size() < holders[c].size()) {
      fail("shards: class " + std::to_string(c) + " has " + std::to_string(by_class[c].size()) +
           " samples, fewer than the " + std::to_string(holders[c].size()) +
           " devices that hold it, so not every device would see " + std::to_string(k) +
           " classes");
    }
    shuffle(rng, by_class[c]);
    const std::vector<double> equal(holders[c].size(), 1.0);
    deal(by_class[c], apportion(by_class[c].size(), equal), holders[c], partition);
  }
  return partition;
}

void validate(const std::vector<std::uint8_t>& labels, std::int64_t num_classes,
              const PartitionSpec& spec) {
  if (spec.devices < 1) fail("devices is " + std::to_string(spec.devices) + ", expected >= 1");
  if (num_classes < 1 || num_classes > 256) {
    fail("num_classes is " + std::to_string(num_classes) + ", expected 1..256");
  }
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] >= num_classes) {
      fail("label " + std::to_string(i) + " is " + std::to_string(labels[i]) +
           ", expected < num_classes = " + std::to_string(num_classes));
    }
  }
  if (labels.size() < static_cast<std::size_t>(spec.devices)) {
    fail(std::to_string(labels.size()) + " samples cannot give each of " +
         std::to_string(spec.devices) + " devices at least one");
  }
  if (spec.scheme == PartitionScheme::dirichlet &&
      !(spec.alpha > 0.0 && std::isfinite(spec.alpha))) {
    fail("dirichlet alpha is " + std::to_string(spec.alpha) + ", expected a finite value > 0");
  }
  if (!spec.shares.empty()) {
    // Shares given with another scheme would be silently ignored; say so instead.
    if (spec.scheme != PartitionScheme::iid) {
      fail("shares are only used by the iid scheme, not " + to_string(spec.scheme));
    }
    if (spec.shares.size() != static_cast<std::size_t>(spec.devices)) {
      fail(std::to_string(spec.shares.size()) + " shares given for " +
           std::to_string(spec.devices) + " devices; expected one per device");
    }
    for (std::size_t d = 0; d < spec.shares.size(); ++d) {
      if (!(spec.shares[d] > 0.0 && std::isfinite(spec.shares[d]))) {
        fail("share " + std::to_string(d) + " is " + std::to_string(spec.shares[d]) +
             ", expected a finite value > 0");
      }
    }
  }
}

}  // namespace

PartitionScheme parse_partition_scheme(const std::string& name) {
  if (name == "iid") return PartitionScheme::iid;
  if (name == "dirichlet") return PartitionScheme::dirichlet;
  if (name == "shards") return PartitionScheme::shards;
  throw std::invalid_argument("unknown partition scheme '" + name +
                              "'; expected one of: iid, dirichlet, shards");
}

std::string to_string(PartitionScheme scheme) {
  switch (scheme) {
    case PartitionScheme::iid:
      return "iid";
    case PartitionScheme::dirichlet:
      return "dirichlet";
    case PartitionScheme::shards:
      return "shards";
  }
  throw std::invalid_argument("to_string: invalid PartitionScheme value");
}

std::vector<std::vector<std::size_t>> partition_indices(const std::vector<std::uint8_t>& labels,
                                                        std::int64_t num_classes,
                                                        const PartitionSpec& spec) {
  validate(labels, num_classes, spec);
  std::mt19937_64 rng(spec.seed);
  Partition partition;
  switch (spec.scheme) {
    case PartitionScheme::iid:
      partition = partition_iid(labels.size(), spec, rng);
      break;
    case PartitionScheme::dirichlet:
      partition = partition_dirichlet(labels, num_classes, spec, rng);
      break;
    case PartitionScheme::shards:
      partition = partition_shards(labels, num_classes, spec, rng);
      break;
  }
  if (partition.size() != static_cast<std::size_t>(spec.devices)) {
    fail("invalid PartitionScheme value " + std::to_string(static_cast<int>(spec.scheme)));
  }
  for (auto& indices : partition) std::sort(indices.begin(), indices.end());
  return partition;
}

}  // namespace cmlbed::data
