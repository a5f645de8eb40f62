// IDX reader: good raw and gzip files round-trip, and every kind of broken file
// is rejected with a DataError that names the file.

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <new>
#include <string>
#include <vector>

#include "cmlbed/data/data_error.hpp"
#include "expect_data_error.hpp"
#include "cmlbed/data/dataset_loader.hpp"
#include "cmlbed/data/idx_reader.hpp"

// The largest single allocation made through operator new in this binary. A
// reader that trusted a header and reserved its size up front would show here
// even where the operating system overcommits memory and nothing else fails.
// Every non-aligned form is replaced, so that each pairs with a matching delete
// (sanitizers check the pairing).
namespace {
std::atomic<std::size_t> g_largest_allocation{0};

void* tracked_malloc(std::size_t size) noexcept {
  std::size_t seen = g_largest_allocation.load(std::memory_order_relaxed);
  while (size > seen && !g_largest_allocation.compare_exchange_weak(seen, size)) {
  }
  return std::malloc(size == 0 ? 1 : size);
}

void* tracked_malloc_or_throw(std::size_t size) {
  if (void* memory = tracked_malloc(size)) return memory;
  throw std::bad_alloc();
}
}  // namespace

// GCC sees free() applied to what it knows came from operator new; here that
// pairing is the point, since this operator new is malloc.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t size) { return tracked_malloc_or_throw(size); }
void* operator new[](std::size_t size) { return tracked_malloc_or_throw(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return tracked_malloc(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return tracked_malloc(size);
}
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete[](void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }
void operator delete[](void* memory, std::size_t) noexcept { std::free(memory); }
void operator delete(void* memory, const std::nothrow_t&) noexcept { std::free(memory); }
void operator delete[](void* memory, const std::nothrow_t&) noexcept { std::free(memory); }

namespace {

namespace fs = std::filesystem;
using cmlbed::data::DataError;
using cmlbed::data::read_idx;
using Bytes = std::vector<std::uint8_t>;

void append_u32(Bytes& bytes, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8)
    bytes.push_back(static_cast<std::uint8_t>(value >> shift));
}

Bytes images_file(std::uint32_t count, std::uint32_t rows, std::uint32_t cols, const Bytes& pixels,
                  std::uint32_t magic = 0x00000803) {
  Bytes bytes;
  append_u32(bytes, magic);
  append_u32(bytes, count);
  append_u32(bytes, rows);
  append_u32(bytes, cols);
  bytes.insert(bytes.end(), pixels.begin(), pixels.end());
  return bytes;
}

Bytes labels_file(const Bytes& labels, std::uint32_t count, std::uint32_t magic = 0x00000801) {
  Bytes bytes;
  append_u32(bytes, magic);
  append_u32(bytes, count);
  bytes.insert(bytes.end(), labels.begin(), labels.end());
  return bytes;
}

Bytes labels_file(const Bytes& labels) {
  return labels_file(labels, static_cast<std::uint32_t>(labels.size()));
}

void write_raw(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

void write_gzip(const std::string& path, const Bytes& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << path;
  ASSERT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

Bytes read_raw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

using cmlbed::data::test_support::expect_data_error;

// Three 2x4 images with distinct pixel values and labels 0, 9, 4.
const Bytes kPixels = [] {
  Bytes pixels(3 * 2 * 4);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 11 + 3);
  return pixels;
}();
const Bytes kLabels = {0, 9, 4};

class IdxReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ =
        fs::path(::testing::TempDir()) / ("cmlbed_idx_" + test + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes good images and labels files, raw or gzip, and returns their paths.
  struct GoodFiles {
    std::string images, labels;
  };

  GoodFiles write_good(bool gzip_images, bool gzip_labels) {
    const std::string images = path(gzip_images ? "images.gz" : "images");
    const std::string labels = path(gzip_labels ? "labels.gz" : "labels");
    const Bytes image_bytes = images_file(3, 2, 4, kPixels);
    const Bytes label_bytes = labels_file(kLabels);
    gzip_images ? write_gzip(images, image_bytes) : write_raw(images, image_bytes);
    gzip_labels ? write_gzip(labels, label_bytes) : write_raw(labels, label_bytes);
    return {images, labels};
  }

  fs::path dir_;
};

void expect_good_set(const cmlbed::data::ImageSet& set) {
  EXPECT_EQ(set.channels, 1);
  EXPECT_EQ(set.height, 2);
  EXPECT_EQ(set.width, 4);
  EXPECT_EQ(set.num_classes, 10);
  EXPECT_EQ(set.size(), 3U);
  EXPECT_EQ(set.sample_bytes(), 8U);
  EXPECT_EQ(set.pixels, kPixels);
  EXPECT_EQ(set.labels, kLabels);
}

TEST_F(IdxReaderTest, ReadsRawFiles) {
  const GoodFiles good = write_good(false, false);
  expect_good_set(read_idx(good.images, good.labels));
}

TEST_F(IdxReaderTest, ReadsGzipFiles) {
  const GoodFiles good = write_good(true, true);
  expect_good_set(read_idx(good.images, good.labels));
}

TEST_F(IdxReaderTest, ReadsGzipImagesWithRawLabels) {
  const GoodFiles good = write_good(true, false);
  expect_good_set(read_idx(good.images, good.labels));
}

TEST_F(IdxReaderTest, DetectsGzipByContentNotName) {
  const std::string images = path("images-no-suffix");
  const std::string labels = path("labels-no-suffix");
  write_gzip(images, images_file(3, 2, 4, kPixels));
  write_raw(labels, labels_file(kLabels));
  expect_good_set(read_idx(images, labels));
}

TEST_F(IdxReaderTest, MissingFileIsNamed) {
  const GoodFiles good = write_good(false, false);
  const std::string missing = path("does-not-exist");
  expect_data_error([&] { read_idx(missing, good.labels); }, {missing, "cannot open"});
  expect_data_error([&] { read_idx(good.images, missing); }, {missing, "cannot open"});
}

TEST_F(IdxReaderTest, DirectoryIsRejected) {
  const GoodFiles good = write_good(false, false);
  expect_data_error([&] { read_idx(dir_.string(), good.labels); }, {dir_.string(), "directory"});
}

TEST_F(IdxReaderTest, WrongImagesMagicSaysExpectedAndFound) {
  const GoodFiles good = write_good(false, false);
  // Passing the labels file as images is the likely mistake.
  expect_data_error([&] { read_idx(good.labels, good.labels); },
                    {good.labels, "0x00000803", "0x00000801"});
}

TEST_F(IdxReaderTest, WrongLabelsMagicSaysExpectedAndFound) {
  const GoodFiles good = write_good(false, false);
  expect_data_error([&] { read_idx(good.images, good.images); },
                    {good.images, "0x00000801", "0x00000803"});
}

TEST_F(IdxReaderTest, WrongMagicInGzipFile) {
  const std::string images = path("images.gz");
  write_gzip(images, images_file(3, 2, 4, kPixels, 0x00000903));
  const std::string labels = write_good(false, false).labels;
  expect_data_error([&] { read_idx(images, labels); }, {images, "0x00000803", "0x00000903"});
}

TEST_F(IdxReaderTest, ZeroSizesAreRejected) {
  const std::string labels = write_good(false, false).labels;
  const std::string images = path("zero");
  write_raw(images, images_file(0, 2, 4, {}));
  expect_data_error([&] { read_idx(images, labels); }, {images, "image count is 0"});
  write_raw(images, images_file(3, 0, 4, {}));
  expect_data_error([&] { read_idx(images, labels); }, {images, "rows is 0"});
  write_raw(images, images_file(3, 2, 0, {}));
  expect_data_error([&] { read_idx(images, labels); }, {images, "columns is 0"});
  const std::string empty_labels = path("zero-labels");
  write_raw(empty_labels, labels_file({}, 0));
  write_raw(images, images_file(3, 2, 4, kPixels));
  expect_data_error([&] { read_idx(images, empty_labels); }, {empty_labels, "label count is 0"});
}

TEST_F(IdxReaderTest, AbsurdCountInTinyFileFailsWithoutAllocating) {
  const std::string labels = write_good(false, false).labels;
  const Bytes few_pixels(10, 7);
  for (const bool gzip : {false, true}) {
    const std::string images = path(gzip ? "absurd.gz" : "absurd");
    gzip ? write_gzip(images, images_file(0xFFFFFFFFU, 28, 28, few_pixels))
         : write_raw(images, images_file(0xFFFFFFFFU, 28, 28, few_pixels));
    g_largest_allocation = 0;
    expect_data_error([&] { read_idx(images, labels); }, {images, "4294967295", "1..100000000"});
    EXPECT_LT(g_largest_allocation.load(), std::size_t{1} << 26) << "gzip: " << gzip;
  }
}

TEST_F(IdxReaderTest, AbsurdSidesAndTotalAreRejected) {
  const std::string labels = write_good(false, false).labels;
  const std::string images = path("absurd");
  write_raw(images, images_file(3, 5000, 4, {}));
  expect_data_error([&] { read_idx(images, labels); }, {images, "rows is 5000", "1..4096"});
  write_raw(images, images_file(3, 4, 4097, {}));
  expect_data_error([&] { read_idx(images, labels); }, {images, "columns is 4097"});
  // Each field in range, but 1000 images of 4096x4096 would be 16 GiB.
  write_raw(images, images_file(1000, 4096, 4096, {}));
  expect_data_error([&] { read_idx(images, labels); }, {images, "16777216000 bytes"});
}

TEST_F(IdxReaderTest, PlausibleHeaderInTinyGzipFailsWithoutAllocating) {
  // 5 million 28x28 images (3.9 GB) passes every header limit; the stream then
  // ends after 100 bytes. Buffers must grow with the data, not with the header.
  const std::string images = path("short.gz");
  const std::string labels = path("short-labels.gz");
  write_gzip(images, images_file(5'000'000, 28, 28, Bytes(100, 1)));
  write_gzip(labels, labels_file(Bytes(100, 1), 5'000'000));
  g_largest_allocation = 0;
  expect_data_error([&] { read_idx(images, labels); }, {images, "truncated"});
  EXPECT_LT(g_largest_allocation.load(), std::size_t{1} << 26);
}

TEST_F(IdxReaderTest, RawSizeMustMatchHeader) {
  const std::string labels = write_good(false, false).labels;
  const std::string images = path("short");
  // Two images' worth of pixels for a header claiming three.
  write_raw(images, images_file(3, 2, 4, Bytes(kPixels.begin(), kPixels.begin() + 16)));
  expect_data_error([&] { read_idx(images, labels); },
                    {images, "file size is 32 bytes", "implies 40"});
}

TEST_F(IdxReaderTest, TruncatedHeaderIsReported) {
  const std::string labels = write_good(false, false).labels;
  const std::string images = path("header");
  Bytes bytes = images_file(3, 2, 4, {});
  bytes.resize(10);
  write_raw(images, bytes);
  expect_data_error([&] { read_idx(images, labels); },
                    {images, "truncated", "expected 4 more bytes"});
}

TEST_F(IdxReaderTest, TruncatedGzipPayloadIsReported) {
  const std::string labels = write_good(false, false).labels;
  const std::string images = path("short.gz");
  write_gzip(images, images_file(3, 2, 4, Bytes(kPixels.begin(), kPixels.begin() + 20)));
  expect_data_error([&] { read_idx(images, labels); },
                    {images, "truncated", "expected 24 bytes", "found only 20"});
}

TEST_F(IdxReaderTest, CutGzipStreamIsReported) {
  // A download cut short: the compressed stream itself ends early.
  const std::string full = path("full.gz");
  Bytes pixels(2000 * 28 * 28);
  std::uint32_t state = 12345;
  for (auto& pixel : pixels)
    pixel = static_cast<std::uint8_t>((state = state * 1664525U + 1013904223U) >> 24);
  Bytes labels_bytes(2000, 3);
  write_gzip(full, images_file(2000, 28, 28, pixels));
  const std::string labels = path("labels");
  write_raw(labels, labels_file(labels_bytes));
  Bytes compressed = read_raw(full);
  ASSERT_GT(compressed.size(), 1000U);
  compressed.resize(compressed.size() / 2);
  const std::string cut = path("cut.gz");
  write_raw(cut, compressed);
  expect_data_error([&] { read_idx(cut, labels); }, {cut, "truncated", "gzip"});
}

TEST_F(IdxReaderTest, CorruptGzipStreamIsReported) {
  const GoodFiles good = write_good(true, false);
  Bytes compressed = read_raw(good.images);
  // Flip the CRC-32 in the trailer: the data inflates but fails its check.
  compressed[compressed.size() - 8] ^= 0xFF;
  write_raw(good.images, compressed);
  expect_data_error([&] { read_idx(good.images, good.labels); }, {good.images, "gzip"});
}

TEST_F(IdxReaderTest, TrailingBytesAreRejected) {
  const GoodFiles good = write_good(false, false);
  const std::string& labels = good.labels;
  Bytes bytes = images_file(3, 2, 4, kPixels);
  bytes.push_back(0);
  const std::string raw = path("trailing");
  write_raw(raw, bytes);
  expect_data_error([&] { read_idx(raw, labels); }, {raw, "file size is 41 bytes", "implies 40"});
  const std::string gz = path("trailing.gz");
  write_gzip(gz, bytes);
  expect_data_error([&] { read_idx(gz, labels); }, {gz, "trailing data", "after 40 bytes"});
  const std::string gz_labels = path("labels-trailing.gz");
  Bytes label_bytes = labels_file(kLabels);
  label_bytes.push_back(1);
  write_gzip(gz_labels, label_bytes);
  expect_data_error([&] { read_idx(good.images, gz_labels); }, {gz_labels, "trailing data"});
}

TEST_F(IdxReaderTest, CountMismatchIsRejected) {
  const std::string images = write_good(false, false).images;
  const std::string labels = path("four-labels");
  write_raw(labels, labels_file({1, 2, 3, 4}));
  expect_data_error([&] { read_idx(images, labels); }, {labels, "4 labels", "expected 3", images});
}

TEST_F(IdxReaderTest, LabelOutOfRangeIsRejected) {
  const std::string images = write_good(false, false).images;
  const std::string labels = path("bad-labels");
  write_raw(labels, labels_file({0, 1, 10}));
  expect_data_error([&] { read_idx(images, labels); }, {labels, "label 2 is 10", "0..9"});
  // The bound comes from num_classes: 5 is bad for five classes, fine for six.
  write_raw(labels, labels_file({0, 5, 1}));
  expect_data_error([&] { read_idx(images, labels, 5); }, {labels, "label 1 is 5"});
  EXPECT_EQ(read_idx(images, labels, 6).num_classes, 6);
}

TEST_F(IdxReaderTest, InvalidNumClassesIsAnArgumentError) {
  const GoodFiles good = write_good(false, false);
  EXPECT_THROW(read_idx(good.images, good.labels, 0), std::invalid_argument);
  EXPECT_THROW(read_idx(good.images, good.labels, 257), std::invalid_argument);
}

// An mnist-style directory as load_dataset expects it, with train images gzip'd
// and the rest raw, as happens when only some files were unpacked.
TEST_F(IdxReaderTest, LoadDatasetReadsAnIdxDirectory) {
  write_gzip(path("train-images-idx3-ubyte.gz"), images_file(3, 2, 4, kPixels));
  write_raw(path("train-labels-idx1-ubyte"), labels_file(kLabels));
  write_raw(path("t10k-images-idx3-ubyte"), images_file(1, 2, 4, Bytes(8, 5)));
  write_raw(path("t10k-labels-idx1-ubyte"), labels_file({7}));
  cmlbed::data::DatasetSpec spec;
  spec.name = "mnist";
  spec.dir = dir_.string();
  EXPECT_EQ(
      cmlbed::data::required_files(spec),
      (std::vector<std::string>{path("train-images-idx3-ubyte.gz"), path("train-labels-idx1-ubyte"),
                                path("t10k-images-idx3-ubyte"), path("t10k-labels-idx1-ubyte")}));
  const cmlbed::data::Dataset dataset = cmlbed::data::load_dataset(spec);
  expect_good_set(dataset.train);
  EXPECT_EQ(dataset.test.labels, Bytes{7});
  EXPECT_EQ(dataset.test.pixels, Bytes(8, 5));
}

TEST_F(IdxReaderTest, RequiredFilesPreferThePlainNameWhenNeitherExists) {
  write_raw(path("t10k-labels-idx1-ubyte"), labels_file({7}));
  write_gzip(path("t10k-labels-idx1-ubyte.gz"), labels_file({7}));
  cmlbed::data::DatasetSpec spec;
  spec.name = "fashion-mnist";
  spec.dir = dir_.string();
  const std::vector<std::string> files = cmlbed::data::required_files(spec);
  ASSERT_EQ(files.size(), 4U);
  EXPECT_EQ(files[0], path("train-images-idx3-ubyte"));  // missing: plain name
  EXPECT_EQ(files[3], path("t10k-labels-idx1-ubyte"));   // both: plain wins
  expect_data_error([&] { cmlbed::data::load_dataset(spec); }, {files[0], "cannot open"});
}

TEST(DatasetLoader, NamesAndDirectoriesAreChecked) {
  EXPECT_EQ(cmlbed::data::dataset_names(),
            (std::vector<std::string>{"fashion-mnist", "mnist", "cifar10", "synthetic", "arrays"}));
  cmlbed::data::DatasetSpec arrays;
  arrays.name = "arrays";  // its one file, which must be given
  EXPECT_THROW(cmlbed::data::required_files(arrays), std::invalid_argument);
  arrays.file = "/data/mine.npz";
  EXPECT_EQ(cmlbed::data::required_files(arrays), std::vector<std::string>{"/data/mine.npz"});
  cmlbed::data::DatasetSpec spec;  // fashion-mnist in its default directory
  const std::string first = cmlbed::data::required_files(spec).front();
  EXPECT_EQ(first.rfind(
                std::string(cmlbed::data::kDefaultFashionMnistDir) + "/train-images-idx3-ubyte", 0),
            0U)
      << first;
  spec.name = "mnist";  // no default directory
  EXPECT_THROW(cmlbed::data::required_files(spec), std::invalid_argument);
  EXPECT_THROW(cmlbed::data::load_dataset(spec), std::invalid_argument);
  spec.name = "imagenet";
  spec.dir = "/tmp";
  try {
    cmlbed::data::required_files(spec);
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    for (const char* name : {"imagenet", "fashion-mnist", "mnist", "cifar10", "synthetic"}) {
      EXPECT_NE(message.find(name), std::string::npos) << message;
    }
  }
}

}  // namespace
