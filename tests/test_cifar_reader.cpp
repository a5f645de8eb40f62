// CIFAR-10 binary reader: records round-trip across batch files, and broken
// batches are rejected with a DataError that names the file.

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "cmlbed/data/cifar_reader.hpp"
#include "cmlbed/data/data_error.hpp"
#include "expect_data_error.hpp"
#include "cmlbed/data/dataset_loader.hpp"

namespace {

namespace fs = std::filesystem;
using cmlbed::data::DataError;
using cmlbed::data::read_cifar10;
using Bytes = std::vector<std::uint8_t>;

constexpr std::size_t kRecord = 3073;
constexpr std::size_t kImage = 3072;

// Record r of a batch: label `label`, pixel p = (seed + r * 7 + p) mod 256.
Bytes make_batch(const std::vector<std::uint8_t>& labels, std::uint8_t seed) {
  Bytes bytes;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    bytes.push_back(labels[r]);
    for (std::size_t p = 0; p < kImage; ++p)
      bytes.push_back(static_cast<std::uint8_t>(seed + r * 7 + p));
  }
  return bytes;
}

using cmlbed::data::test_support::expect_data_error;

class CifarReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::path(::testing::TempDir()) /
           ("cmlbed_cifar_" + test + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  std::string write(const std::string& name, const Bytes& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    EXPECT_TRUE(out.good()) << path;
    return path;
  }

  fs::path dir_;
};

TEST_F(CifarReaderTest, ReadsRecordsAcrossBatchesInOrder) {
  const std::string first = write("data_batch_1.bin", make_batch({3, 0, 9}, 10));
  const std::string second = write("data_batch_2.bin", make_batch({7}, 200));
  const cmlbed::data::ImageSet set = read_cifar10({first, second});
  EXPECT_EQ(set.channels, 3);
  EXPECT_EQ(set.height, 32);
  EXPECT_EQ(set.width, 32);
  EXPECT_EQ(set.num_classes, 10);
  ASSERT_EQ(set.size(), 4U);
  EXPECT_EQ(set.labels, (Bytes{3, 0, 9, 7}));
  ASSERT_EQ(set.pixels.size(), 4 * kImage);
  // Spot checks: first pixel of each record, and the last of the last one.
  EXPECT_EQ(set.pixels[0], 10);
  EXPECT_EQ(set.pixels[kImage], static_cast<std::uint8_t>(10 + 7));
  EXPECT_EQ(set.pixels[2 * kImage + 5], static_cast<std::uint8_t>(10 + 14 + 5));
  EXPECT_EQ(set.pixels[3 * kImage], 200);
  EXPECT_EQ(set.pixels[4 * kImage - 1], static_cast<std::uint8_t>(200 + kImage - 1));
}

TEST_F(CifarReaderTest, ReadsGzipBatch) {
  const Bytes bytes = make_batch({1, 2}, 5);
  const std::string path = (dir_ / "batch.bin.gz").string();
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
  const cmlbed::data::ImageSet set = read_cifar10({path});
  EXPECT_EQ(set.labels, (Bytes{1, 2}));
  EXPECT_EQ(set.pixels[kImage + 1], static_cast<std::uint8_t>(5 + 7 + 1));
}

TEST_F(CifarReaderTest, SizeNotAMultipleOfRecordIsRejected) {
  Bytes bytes = make_batch({1, 2}, 0);
  bytes.pop_back();
  const std::string path = write("short.bin", bytes);
  expect_data_error([&] { read_cifar10({path}); }, {path, "6145 bytes", "multiple of 3073"});
}

TEST_F(CifarReaderTest, EmptyFileIsRejected) {
  const std::string good = write("good.bin", make_batch({1}, 0));
  const std::string empty = write("empty.bin", {});
  expect_data_error(
      [&] {
        read_cifar10({good, empty});
      },
      {empty, "is 0 bytes", "non-zero multiple"});
}

TEST_F(CifarReaderTest, LabelOutOfRangeIsRejected) {
  const std::string path = write("bad-label.bin", make_batch({4, 10, 2}, 0));
  expect_data_error([&] { read_cifar10({path}); }, {path, "record 1 has label 10", "0..9"});
}

TEST_F(CifarReaderTest, MissingFileIsNamed) {
  const std::string good = write("good.bin", make_batch({1}, 0));
  const std::string missing = (dir_ / "data_batch_9.bin").string();
  expect_data_error([&] { read_cifar10({good, missing}); }, {missing, "cannot open"});
}

TEST_F(CifarReaderTest, EmptyListIsAnArgumentError) {
  EXPECT_THROW(read_cifar10({}), std::invalid_argument);
}

TEST_F(CifarReaderTest, LoadDatasetFindsBatchesInTheArchiveFolder) {
  // The archive unpacks to cifar-10-batches-bin/; either that or its parent
  // may be given as the directory.
  fs::create_directories(dir_ / "cifar-10-batches-bin");
  std::vector<std::string> expected;
  for (int batch = 1; batch <= 5; ++batch) {
    const std::string name = "cifar-10-batches-bin/data_batch_" + std::to_string(batch) + ".bin";
    expected.push_back(write(name, make_batch({static_cast<std::uint8_t>(batch)}, 0)));
  }
  expected.push_back(write("cifar-10-batches-bin/test_batch.bin", make_batch({9, 8}, 0)));
  cmlbed::data::DatasetSpec spec;
  spec.name = "cifar10";
  for (const fs::path& dir : {dir_, dir_ / "cifar-10-batches-bin"}) {
    spec.dir = dir.string();
    EXPECT_EQ(cmlbed::data::required_files(spec), expected);
    const cmlbed::data::Dataset dataset = cmlbed::data::load_dataset(spec);
    EXPECT_EQ(dataset.train.labels, (Bytes{1, 2, 3, 4, 5}));
    EXPECT_EQ(dataset.test.labels, (Bytes{9, 8}));
  }
  spec.dir.clear();  // cifar10 has no default directory
  EXPECT_THROW(cmlbed::data::required_files(spec), std::invalid_argument);
}

}  // namespace
