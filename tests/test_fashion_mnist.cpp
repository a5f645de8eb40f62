// The installed Fashion-MNIST files load through load_dataset with the shape
// and class balance the data set is documented to have.

#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "cmlbed/data/dataset_loader.hpp"

namespace {

using cmlbed::data::DatasetSpec;

void expect_fashion_mnist_split(const cmlbed::data::ImageSet& set, std::size_t samples) {
  EXPECT_EQ(set.channels, 1);
  EXPECT_EQ(set.height, 28);
  EXPECT_EQ(set.width, 28);
  EXPECT_EQ(set.num_classes, 10);
  ASSERT_EQ(set.size(), samples);
  EXPECT_EQ(set.pixels.size(), samples * 28 * 28);
  std::vector<std::size_t> per_class(10, 0);
  for (const std::uint8_t label : set.labels) {
    ASSERT_LT(label, 10);
    ++per_class[label];
  }
  for (const std::size_t count : per_class) EXPECT_EQ(count, samples / 10);
}

// scripts/setup.sh installs Debian's dataset-fashion-mnist: a missing data set fails here.
TEST(FashionMnist, LoadsInstalledDataSet) {
  ASSERT_TRUE(std::filesystem::exists(cmlbed::data::kDefaultFashionMnistDir))
      << "Fashion-MNIST is not installed at " << cmlbed::data::kDefaultFashionMnistDir
      << " (apt-get install dataset-fashion-mnist; scripts/setup.sh does)";
  DatasetSpec spec;
  spec.name = "fashion-mnist";
  for (const std::string& file : cmlbed::data::required_files(spec)) {
    EXPECT_TRUE(std::filesystem::exists(file)) << file;
  }
  const cmlbed::data::Dataset dataset = cmlbed::data::load_dataset(spec);
  expect_fashion_mnist_split(dataset.train, 60000);
  expect_fashion_mnist_split(dataset.test, 10000);
}

}  // namespace
