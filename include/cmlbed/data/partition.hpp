#pragma once
// Splitting a data set's samples among devices: IID, or non-IID by label skew
// (Dirichlet) or by a fixed number of classes per device (shards).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cmlbed::data {

enum class PartitionScheme { iid, dirichlet, shards };

// "iid", "dirichlet" or "shards"; anything else throws std::invalid_argument
// listing the allowed names.
PartitionScheme parse_partition_scheme(const std::string& name);
std::string to_string(PartitionScheme scheme);

struct PartitionSpec {
  PartitionScheme scheme = PartitionScheme::iid;
  int devices = 1;
  double alpha = 0.5;          // dirichlet only: smaller = more label skew
  int classes_per_device = 2;  // shards only
  std::vector<double> shares;  // iid only: relative weight per device; empty = equal
  std::uint64_t seed = 0;
};

// Returns, per device, the sorted indices of its samples. Every scheme is
// disjoint, complete (every index goes to exactly one device), deterministic
// from spec.seed, and gives every device at least one sample.
//
//  iid:       a seeded shuffle split by `shares` with largest-remainder rounding.
//  dirichlet: for each class, proportions p ~ Dir(alpha) over devices, and that
//             class's shuffled samples split by p. Redrawn (a bounded number of
//             times, deterministically) until no device is empty.
//  shards:    with k = classes_per_device, device d holds classes
//             (d*k + j) mod num_classes for j < k, and each class's shuffled
//             samples are split evenly among the devices that hold it, so every
//             device sees exactly k classes. Needs k <= num_classes and
//             devices*k >= num_classes (else some class would be unassigned).
//
// Throws std::invalid_argument for: devices < 1, fewer samples than devices,
// num_classes outside 1..256 or a label >= num_classes, alpha <= 0 (dirichlet),
// k outside the range above or a class with fewer samples than holders
// (shards), shares that are non-positive, of the wrong count, or given for a
// scheme other than iid, and when no partition without empty devices is found.
std::vector<std::vector<std::size_t>> partition_indices(const std::vector<std::uint8_t>& labels,
                                                        std::int64_t num_classes,
                                                        const PartitionSpec& spec);

}  // namespace cmlbed::data
