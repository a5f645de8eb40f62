// Synthetic data: deterministic from its seeds, balanced, and learnable in the
// sense that a test set drawn with the same prototypes is predictable from a
// train set, while one drawn with other prototypes is not.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "cmlbed/data/dataset_loader.hpp"
#include "cmlbed/data/synthetic.hpp"

namespace {

using cmlbed::data::ImageSet;
using cmlbed::data::make_synthetic;
using cmlbed::data::SyntheticSpec;

SyntheticSpec spec_with(std::size_t samples, std::uint64_t seed, std::uint64_t prototype_seed) {
  SyntheticSpec spec;
  spec.samples = samples;
  spec.seed = seed;
  spec.prototype_seed = prototype_seed;
  return spec;
}

// Accuracy on `test` of the classifier that predicts the class whose mean train
// image is nearest (squared Euclidean distance).
double nearest_class_mean_accuracy(const ImageSet& train, const ImageSet& test) {
  const std::size_t bytes = train.sample_bytes();
  const auto classes = static_cast<std::size_t>(train.num_classes);
  std::vector<std::vector<double>> means(classes, std::vector<double>(bytes, 0.0));
  std::vector<double> counts(classes, 0.0);
  for (std::size_t i = 0; i < train.size(); ++i) {
    counts[train.labels[i]] += 1.0;
    for (std::size_t p = 0; p < bytes; ++p)
      means[train.labels[i]][p] += train.pixels[i * bytes + p];
  }
  for (std::size_t c = 0; c < classes; ++c) {
    for (double& value : means[c]) value /= std::max(1.0, counts[c]);
  }
  std::size_t correct = 0;
  for (std::size_t i = 0; i < test.size(); ++i) {
    std::size_t best = 0;
    double best_distance = std::numeric_limits<double>::max();
    for (std::size_t c = 0; c < classes; ++c) {
      double distance = 0.0;
      for (std::size_t p = 0; p < bytes; ++p) {
        const double difference = test.pixels[i * bytes + p] - means[c][p];
        distance += difference * difference;
      }
      if (distance < best_distance) {
        best_distance = distance;
        best = c;
      }
    }
    correct += best == test.labels[i] ? 1 : 0;
  }
  return static_cast<double>(correct) / static_cast<double>(test.size());
}

TEST(Synthetic, HasRequestedShapeAndBalancedLabels) {
  SyntheticSpec spec = spec_with(1003, 1, 2);
  spec.channels = 3;
  spec.height = 16;
  spec.width = 12;
  spec.num_classes = 7;
  const ImageSet set = make_synthetic(spec);
  EXPECT_EQ(set.channels, 3);
  EXPECT_EQ(set.height, 16);
  EXPECT_EQ(set.width, 12);
  EXPECT_EQ(set.num_classes, 7);
  ASSERT_EQ(set.size(), 1003U);
  EXPECT_EQ(set.pixels.size(), 1003U * 3 * 16 * 12);
  std::vector<int> per_class(7, 0);
  for (const std::uint8_t label : set.labels) {
    ASSERT_LT(label, 7);
    ++per_class[label];
  }
  // 1003 = 7 * 143 + 2: two classes get one extra.
  for (const int count : per_class) {
    EXPECT_GE(count, 143);
    EXPECT_LE(count, 144);
  }
  // Shuffled, not 0,1,2,...: the first ten labels are not the cycle.
  bool cyclic = true;
  for (std::size_t i = 0; i < 10; ++i) cyclic = cyclic && set.labels[i] == i % 7;
  EXPECT_FALSE(cyclic);
}

TEST(Synthetic, SameSpecGivesIdenticalSet) {
  const ImageSet first = make_synthetic(spec_with(200, 42, 7));
  const ImageSet second = make_synthetic(spec_with(200, 42, 7));
  EXPECT_EQ(first.pixels, second.pixels);
  EXPECT_EQ(first.labels, second.labels);
}

TEST(Synthetic, DifferentSeedsGiveDifferentSets) {
  const ImageSet base = make_synthetic(spec_with(200, 42, 7));
  const ImageSet other_samples = make_synthetic(spec_with(200, 43, 7));
  const ImageSet other_prototypes = make_synthetic(spec_with(200, 42, 8));
  EXPECT_NE(base.labels, other_samples.labels);
  EXPECT_NE(base.pixels, other_samples.pixels);
  EXPECT_NE(base.pixels, other_prototypes.pixels);
}

TEST(Synthetic, PixelsUseTheRangeAndAreNotConstant) {
  const ImageSet set = make_synthetic(spec_with(100, 3, 3));
  const auto [low, high] = std::minmax_element(set.pixels.begin(), set.pixels.end());
  EXPECT_EQ(*low, 0);
  EXPECT_EQ(*high, 255);
  double sum = 0.0;
  for (const std::uint8_t pixel : set.pixels) sum += pixel;
  const double mean = sum / static_cast<double>(set.pixels.size());
  EXPECT_GT(mean, 20.0);
  EXPECT_LT(mean, 200.0);
}

TEST(Synthetic, TestSetWithSamePrototypesIsPredictableFromTrainSet) {
  const ImageSet train = make_synthetic(spec_with(2000, 1, 99));
  const ImageSet test = make_synthetic(spec_with(1000, 2, 99));
  EXPECT_GT(nearest_class_mean_accuracy(train, test), 0.8);
}

TEST(Synthetic, NoiseMakesTheTaskHarder) {
  SyntheticSpec train_spec = spec_with(1000, 1, 5);
  SyntheticSpec test_spec = spec_with(500, 2, 5);
  train_spec.noise = test_spec.noise = 0.05;
  const double clean =
      nearest_class_mean_accuracy(make_synthetic(train_spec), make_synthetic(test_spec));
  train_spec.noise = test_spec.noise = 3.0;
  const double noisy =
      nearest_class_mean_accuracy(make_synthetic(train_spec), make_synthetic(test_spec));
  EXPECT_GT(clean, 0.9);
  EXPECT_LT(noisy, clean - 0.1);
}

TEST(Synthetic, OtherPrototypesAreNotPredictable) {
  // The labels carry no information about a set drawn with other prototypes,
  // so accuracy stays near chance (10%); this is what makes the check above mean
  // something.
  const ImageSet train = make_synthetic(spec_with(2000, 1, 99));
  const ImageSet test = make_synthetic(spec_with(1000, 2, 100));
  EXPECT_LT(nearest_class_mean_accuracy(train, test), 0.4);
}

TEST(Synthetic, InvalidSpecsAreRejected) {
  const SyntheticSpec good = spec_with(10, 0, 0);
  EXPECT_NO_THROW(make_synthetic(good));
  auto expect_invalid = [&](auto change) {
    SyntheticSpec spec = good;
    change(spec);
    EXPECT_THROW(make_synthetic(spec), std::invalid_argument);
  };
  expect_invalid([](SyntheticSpec& s) { s.samples = 0; });
  expect_invalid([](SyntheticSpec& s) { s.channels = 0; });
  expect_invalid([](SyntheticSpec& s) { s.height = 0; });
  expect_invalid([](SyntheticSpec& s) { s.width = -1; });
  expect_invalid([](SyntheticSpec& s) { s.num_classes = 0; });
  expect_invalid([](SyntheticSpec& s) { s.num_classes = 257; });
  expect_invalid([](SyntheticSpec& s) { s.noise = -0.1; });
  expect_invalid([](SyntheticSpec& s) { s.noise = std::numeric_limits<double>::quiet_NaN(); });
}

TEST(Synthetic, LoadDatasetBuildsBothSplitsAndChecksTheyMatch) {
  cmlbed::data::DatasetSpec spec;
  spec.name = "synthetic";
  spec.synthetic_train = spec_with(300, 1, 4);
  spec.synthetic_test = spec_with(100, 2, 4);
  EXPECT_TRUE(cmlbed::data::required_files(spec).empty());
  const cmlbed::data::Dataset dataset = cmlbed::data::load_dataset(spec);
  EXPECT_EQ(dataset.train.size(), 300U);
  EXPECT_EQ(dataset.test.size(), 100U);
  EXPECT_EQ(dataset.train.pixels, make_synthetic(spec.synthetic_train).pixels);
  // A test split with other prototypes or another shape could not be learned
  // from the train split.
  spec.synthetic_test.prototype_seed = 5;
  EXPECT_THROW(cmlbed::data::load_dataset(spec), std::invalid_argument);
  spec.synthetic_test.prototype_seed = 4;
  spec.synthetic_test.width = 27;
  EXPECT_THROW(cmlbed::data::load_dataset(spec), std::invalid_argument);
}

// What a simulation partitions: the labels load_dataset would give, without the images.
TEST(Synthetic, LabelsAloneAreTheSetsLabels) {
  cmlbed::data::DatasetSpec spec;
  spec.name = "synthetic";
  spec.synthetic_train = spec_with(300, 1, 4);
  spec.synthetic_test = spec_with(100, 2, 4);
  const cmlbed::data::DatasetLabels labels = cmlbed::data::load_labels(spec);
  const cmlbed::data::Dataset dataset = cmlbed::data::load_dataset(spec);
  EXPECT_EQ(labels.train_labels, dataset.train.labels);
  EXPECT_EQ(labels.num_classes, dataset.train.num_classes);
  EXPECT_EQ(labels.test_samples, 100U);
  EXPECT_EQ(synthetic_labels(spec.synthetic_train), make_synthetic(spec.synthetic_train).labels);
  spec.synthetic_test.prototype_seed = 5;
  EXPECT_THROW(cmlbed::data::load_labels(spec), std::invalid_argument);
}

}  // namespace
