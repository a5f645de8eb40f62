// Partitioning samples among devices: every scheme is disjoint, complete,
// deterministic and seed-dependent, and each shows its own kind of skew.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "cmlbed/data/image_set.hpp"
#include "cmlbed/data/partition.hpp"

namespace {

using cmlbed::data::parse_partition_scheme;
using cmlbed::data::partition_indices;
using cmlbed::data::PartitionScheme;
using cmlbed::data::PartitionSpec;
using Partition = std::vector<std::vector<std::size_t>>;

// n labels cycling through the classes: n / classes samples each.
std::vector<std::uint8_t> cyclic_labels(std::size_t n, int classes) {
  std::vector<std::uint8_t> labels(n);
  for (std::size_t i = 0; i < n; ++i)
    labels[i] = static_cast<std::uint8_t>(i % static_cast<std::size_t>(classes));
  return labels;
}

PartitionSpec spec_of(PartitionScheme scheme, int devices, std::uint64_t seed) {
  PartitionSpec spec;
  spec.scheme = scheme;
  spec.devices = devices;
  spec.seed = seed;
  return spec;
}

// Each device's list is sorted and non-empty; together they hold 0..n-1 once.
void expect_valid(const Partition& partition, std::size_t n, int devices) {
  ASSERT_EQ(partition.size(), static_cast<std::size_t>(devices));
  std::vector<int> seen(n, 0);
  for (const auto& indices : partition) {
    EXPECT_FALSE(indices.empty());
    EXPECT_TRUE(std::is_sorted(indices.begin(), indices.end()));
    for (const std::size_t index : indices) {
      ASSERT_LT(index, n);
      ++seen[index];
    }
  }
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i], 1) << "sample " << i;
}

std::set<int> classes_of(const std::vector<std::size_t>& indices,
                         const std::vector<std::uint8_t>& labels) {
  std::set<int> classes;
  for (const std::size_t index : indices) classes.insert(labels[index]);
  return classes;
}

// The mean over devices of the fraction of a device's samples in its most
// common class: 1 / classes when balanced, 1 when each device holds one class.
double mean_largest_class_fraction(const Partition& partition,
                                   const std::vector<std::uint8_t>& labels, int classes) {
  double total = 0.0;
  for (const auto& indices : partition) {
    std::vector<int> counts(static_cast<std::size_t>(classes), 0);
    for (const std::size_t index : indices) ++counts[labels[index]];
    total += static_cast<double>(*std::max_element(counts.begin(), counts.end())) /
             static_cast<double>(indices.size());
  }
  return total / static_cast<double>(partition.size());
}

const PartitionScheme kAllSchemes[] = {PartitionScheme::iid, PartitionScheme::dirichlet,
                                       PartitionScheme::shards};

TEST(Partition, SchemeNamesRoundTrip) {
  for (const PartitionScheme scheme : kAllSchemes) {
    EXPECT_EQ(parse_partition_scheme(to_string(scheme)), scheme);
  }
  try {
    parse_partition_scheme("IID-ish");
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    for (const char* name : {"IID-ish", "iid", "dirichlet", "shards"}) {
      EXPECT_NE(message.find(name), std::string::npos) << message;
    }
  }
}

TEST(Partition, EverySchemeIsDisjointCompleteAndDeterministic) {
  const auto labels = cyclic_labels(6000, 10);
  for (const PartitionScheme scheme : kAllSchemes) {
    SCOPED_TRACE(to_string(scheme));
    const PartitionSpec spec = spec_of(scheme, 7, 11);
    const Partition first = partition_indices(labels, 10, spec);
    expect_valid(first, labels.size(), 7);
    EXPECT_EQ(partition_indices(labels, 10, spec), first);
    EXPECT_NE(partition_indices(labels, 10, spec_of(scheme, 7, 12)), first);
  }
}

TEST(Partition, OneDeviceGetsEverything) {
  const auto labels = cyclic_labels(50, 10);
  for (const PartitionScheme scheme : {PartitionScheme::iid, PartitionScheme::dirichlet}) {
    expect_valid(partition_indices(labels, 10, spec_of(scheme, 1, 0)), labels.size(), 1);
  }
  PartitionSpec shards = spec_of(PartitionScheme::shards, 1, 0);
  shards.classes_per_device = 10;
  expect_valid(partition_indices(labels, 10, shards), labels.size(), 1);
}

TEST(Partition, IidSplitsEquallyAndMixesClasses) {
  const auto labels = cyclic_labels(6000, 10);
  const Partition partition = partition_indices(labels, 10, spec_of(PartitionScheme::iid, 7, 3));
  for (const auto& indices : partition) {
    // 6000 / 7 = 857.14: sizes 857 or 858.
    EXPECT_GE(indices.size(), 857U);
    EXPECT_LE(indices.size(), 858U);
    EXPECT_EQ(classes_of(indices, labels).size(), 10U);
  }
  EXPECT_LT(mean_largest_class_fraction(partition, labels, 10), 0.15);
}

TEST(Partition, IidRespectsShares) {
  const auto labels = cyclic_labels(1000, 10);
  PartitionSpec spec = spec_of(PartitionScheme::iid, 4, 5);
  spec.shares = {1.0, 2.0, 3.0, 4.0};
  const Partition partition = partition_indices(labels, 10, spec);
  expect_valid(partition, labels.size(), 4);
  EXPECT_EQ(partition[0].size(), 100U);
  EXPECT_EQ(partition[1].size(), 200U);
  EXPECT_EQ(partition[2].size(), 300U);
  EXPECT_EQ(partition[3].size(), 400U);
}

TEST(Partition, IidRoundsByLargestRemainder) {
  const auto labels = cyclic_labels(10, 2);
  PartitionSpec spec = spec_of(PartitionScheme::iid, 3, 0);
  // Quotas 10 * (0.35, 0.35, 0.30) = 3.5, 3.5, 3.0: the two halves go up in
  // index order only as far as the total allows.
  spec.shares = {0.35, 0.35, 0.30};
  const Partition partition = partition_indices(labels, 2, spec);
  EXPECT_EQ(partition[0].size(), 4U);
  EXPECT_EQ(partition[1].size(), 3U);
  EXPECT_EQ(partition[2].size(), 3U);
  // Quotas 10/3 each: one leftover sample, to device 0.
  spec.shares.clear();
  const Partition equal = partition_indices(labels, 2, spec);
  EXPECT_EQ(equal[0].size(), 4U);
  EXPECT_EQ(equal[1].size(), 3U);
  EXPECT_EQ(equal[2].size(), 3U);
}

TEST(Partition, DirichletSkewFollowsAlpha) {
  const auto labels = cyclic_labels(6000, 10);
  PartitionSpec skewed = spec_of(PartitionScheme::dirichlet, 10, 1);
  skewed.alpha = 0.05;
  PartitionSpec balanced = skewed;
  balanced.alpha = 1000.0;
  const Partition strong = partition_indices(labels, 10, skewed);
  const Partition weak = partition_indices(labels, 10, balanced);
  expect_valid(strong, labels.size(), 10);
  expect_valid(weak, labels.size(), 10);
  EXPECT_GT(mean_largest_class_fraction(strong, labels, 10), 0.6);
  EXPECT_LT(mean_largest_class_fraction(weak, labels, 10), 0.2);
}

TEST(Partition, DirichletThatCannotFillEveryDeviceFails) {
  // Two classes and a tiny alpha put each class on about one device: 50
  // devices cannot all get samples, however often it is redrawn.
  const auto labels = cyclic_labels(100, 2);
  PartitionSpec spec = spec_of(PartitionScheme::dirichlet, 50, 0);
  spec.alpha = 1e-4;
  try {
    partition_indices(labels, 2, spec);
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("without samples"), std::string::npos) << error.what();
  }
}

TEST(Partition, ShardsGiveEachDeviceExactlyItsClasses) {
  const auto labels = cyclic_labels(6000, 10);
  for (const int k : {1, 2, 3, 10}) {
    SCOPED_TRACE("k = " + std::to_string(k));
    PartitionSpec spec = spec_of(PartitionScheme::shards, 10, 4);
    spec.classes_per_device = k;
    const Partition partition = partition_indices(labels, 10, spec);
    expect_valid(partition, labels.size(), 10);
    for (int d = 0; d < 10; ++d) {
      std::set<int> expected;
      for (int j = 0; j < k; ++j) expected.insert((d * k + j) % 10);
      EXPECT_EQ(classes_of(partition[static_cast<std::size_t>(d)], labels), expected)
          << "device " << d;
    }
  }
}

TEST(Partition, ShardsSplitEachClassEvenlyAmongHolders) {
  // 4 devices x 3 classes over 5 classes: device 0 holds 0,1,2; device 1 holds
  // 3,4,0; device 2 holds 1,2,3; device 3 holds 4,0,1. So class 0 has three
  // holders (devices 0, 1, 3) and class 2 has two (devices 0, 2).
  const auto labels = cyclic_labels(600, 5);
  PartitionSpec spec = spec_of(PartitionScheme::shards, 4, 8);
  spec.classes_per_device = 3;
  const Partition partition = partition_indices(labels, 5, spec);
  expect_valid(partition, labels.size(), 4);
  std::vector<std::vector<int>> counts(4, std::vector<int>(5, 0));
  for (std::size_t d = 0; d < 4; ++d) {
    for (const std::size_t index : partition[d]) ++counts[d][labels[index]];
  }
  EXPECT_EQ(counts[0][0], 40);
  EXPECT_EQ(counts[1][0], 40);
  EXPECT_EQ(counts[3][0], 40);
  EXPECT_EQ(counts[2][0], 0);
  EXPECT_EQ(counts[0][2], 60);
  EXPECT_EQ(counts[2][2], 60);
  EXPECT_EQ(counts[1][2], 0);
}

TEST(Partition, ShardsRejectImpossibleClassCounts) {
  const auto labels = cyclic_labels(100, 10);
  PartitionSpec spec = spec_of(PartitionScheme::shards, 4, 0);
  spec.classes_per_device = 2;  // 4 x 2 < 10 classes: some samples unassigned
  EXPECT_THROW(partition_indices(labels, 10, spec), std::invalid_argument);
  spec.classes_per_device = 11;
  EXPECT_THROW(partition_indices(labels, 10, spec), std::invalid_argument);
  spec.classes_per_device = 0;
  EXPECT_THROW(partition_indices(labels, 10, spec), std::invalid_argument);
  // Class 3 has a single sample but two holders.
  std::vector<std::uint8_t> sparse = cyclic_labels(100, 3);
  sparse.push_back(3);
  PartitionSpec two_each = spec_of(PartitionScheme::shards, 4, 0);
  two_each.classes_per_device = 2;
  EXPECT_THROW(partition_indices(sparse, 4, two_each), std::invalid_argument);
}

TEST(Partition, InvalidSpecsAreRejected) {
  const auto labels = cyclic_labels(100, 10);
  auto expect_invalid = [&](PartitionSpec spec, std::int64_t classes = 10) {
    EXPECT_THROW(partition_indices(labels, classes, spec), std::invalid_argument)
        << to_string(spec.scheme);
  };
  for (const PartitionScheme scheme : kAllSchemes) {
    expect_invalid(spec_of(scheme, 0, 0));
    expect_invalid(spec_of(scheme, -3, 0));
    expect_invalid(spec_of(scheme, 101, 0));   // more devices than samples
    expect_invalid(spec_of(scheme, 5, 0), 9);  // label 9 >= 9 classes
  }
  PartitionSpec dirichlet = spec_of(PartitionScheme::dirichlet, 5, 0);
  dirichlet.alpha = 0.0;
  expect_invalid(dirichlet);
  dirichlet.alpha = -1.0;
  expect_invalid(dirichlet);
  dirichlet.alpha = 0.5;
  dirichlet.shares = {1, 1, 1, 1, 1};  // shares mean nothing here
  expect_invalid(dirichlet);

  PartitionSpec iid = spec_of(PartitionScheme::iid, 3, 0);
  iid.shares = {1.0, 2.0};
  expect_invalid(iid);
  iid.shares = {1.0, 0.0, 2.0};
  expect_invalid(iid);
  iid.shares = {1.0, -1.0, 2.0};
  expect_invalid(iid);
  iid.shares = {1.0, 1e-9, 2.0};  // rounds to no samples for device 1
  expect_invalid(iid);
}

TEST(ImageSetSubset, CopiesTheChosenSamplesInOrder) {
  cmlbed::data::ImageSet set;
  set.channels = 1;
  set.height = 1;
  set.width = 2;
  set.num_classes = 3;
  set.pixels = {10, 11, 20, 21, 30, 31};
  set.labels = {0, 1, 2};
  const cmlbed::data::ImageSet picked = set.subset({2, 0});
  EXPECT_EQ(picked.pixels, (std::vector<std::uint8_t>{30, 31, 10, 11}));
  EXPECT_EQ(picked.labels, (std::vector<std::uint8_t>{2, 0}));
  EXPECT_EQ(picked.num_classes, 3);
  EXPECT_EQ(picked.width, 2);
  EXPECT_THROW(set.subset({3}), std::out_of_range);
}

}  // namespace
