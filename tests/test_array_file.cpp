// Array files (data.dataset = arrays): .npz archives, stored and deflated, and HDF5 files
// that this test writes byte by byte as numpy.savez / savez_compressed and h5py do; every
// refusal is a DataError that names the file and says why.

#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "cmlbed/data/array_file.hpp"
#include "cmlbed/data/data_error.hpp"
#include "expect_data_error.hpp"
#include "cmlbed/data/npy_header.hpp"
#include "cmlbed/data/zip_archive.hpp"

namespace {

namespace fs = std::filesystem;
using namespace cmlbed::data;
using Bytes = std::vector<std::uint8_t>;

constexpr std::uint64_t kCap = std::uint64_t{1} << 30;

// One array as numpy.save writes it: descr such as "<f4" or "|u1", C order.
struct Npy {
  std::string descr;
  std::vector<std::uint64_t> shape;
  Bytes data;
  bool fortran = false;
};

template <typename T>
Npy npy(const std::string& descr, std::vector<std::uint64_t> shape, const std::vector<T>& values) {
  Npy array{descr, std::move(shape), Bytes(values.size() * sizeof(T))};
  if (!values.empty()) std::memcpy(array.data.data(), values.data(), array.data.size());
  return array;
}

Bytes npy_bytes(const Npy& array) {
  std::string shape = "(";
  for (const std::uint64_t side : array.shape) shape += std::to_string(side) + ", ";
  if (array.shape.size() > 1) shape.resize(shape.size() - 2);
  if (array.shape.size() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = "{'descr': '" + array.descr + "', 'fortran_order': " + (array.fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  const std::string preamble = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size() & 0xff) +
                               static_cast<char>(header.size() >> 8);
  Bytes out(preamble.begin(), preamble.end());
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), array.data.begin(), array.data.end());
  return out;
}

void put(Bytes& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}

Bytes raw_deflate(const Bytes& in) {
  z_stream stream{};
  EXPECT_EQ(deflateInit2(&stream, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  Bytes out(deflateBound(&stream, in.size()));
  stream.next_in = const_cast<Bytes::value_type*>(in.data());
  stream.avail_in = static_cast<uInt>(in.size());
  stream.next_out = out.data();
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

// A ZIP archive of NAME.npy members; `zip64` writes the sizes in ZIP64 extra fields, as
// numpy.savez's force_zip64 does in local headers.
Bytes zip(const std::map<std::string, Bytes>& members, bool deflated, bool zip64 = false) {
  Bytes out, directory;
  for (const auto& [name, data] : members) {
    const Bytes stored = deflated ? raw_deflate(data) : data;
    const auto crc = crc32(0L, data.data(), static_cast<uInt>(data.size()));
    const std::uint64_t offset = out.size();
    const std::uint16_t method = deflated ? 8 : 0;
    put(out, 0x04034b50, 4);
    put(out, 45, 2);
    put(out, 0, 2);
    put(out, method, 2);
    put(out, 0, 4);
    put(out, crc, 4);
    put(out, zip64 ? 0xffffffff : stored.size(), 4);
    put(out, zip64 ? 0xffffffff : data.size(), 4);
    put(out, name.size(), 2);
    put(out, zip64 ? 20 : 0, 2);
    out.insert(out.end(), name.begin(), name.end());
    if (zip64) {
      put(out, 1, 2);
      put(out, 16, 2);
      put(out, data.size(), 8);
      put(out, stored.size(), 8);
    }
    out.insert(out.end(), stored.begin(), stored.end());
    put(directory, 0x02014b50, 4);
    put(directory, 45, 2);
    put(directory, 45, 2);
    put(directory, 0, 2);
    put(directory, method, 2);
    put(directory, 0, 4);
    put(directory, crc, 4);
    put(directory, zip64 ? 0xffffffff : stored.size(), 4);
    put(directory, zip64 ? 0xffffffff : data.size(), 4);
    put(directory, name.size(), 2);
    put(directory, zip64 ? 28 : 0, 2);
    put(directory, 0, 2);
    put(directory, 0, 2);
    put(directory, 0, 2);
    put(directory, 0, 4);
    put(directory, zip64 ? 0xffffffff : offset, 4);
    directory.insert(directory.end(), name.begin(), name.end());
    if (zip64) {
      put(directory, 1, 2);
      put(directory, 24, 2);
      put(directory, data.size(), 8);
      put(directory, stored.size(), 8);
      put(directory, offset, 8);
    }
  }
  const std::uint64_t directory_offset = out.size();
  out.insert(out.end(), directory.begin(), directory.end());
  put(out, 0x06054b50, 4);
  put(out, 0, 4);
  put(out, members.size(), 2);
  put(out, members.size(), 2);
  put(out, directory.size(), 4);
  put(out, directory_offset, 4);
  put(out, 0, 2);
  return out;
}

// A small data set: 6 train and 3 test samples of C x 2 x 3, labels 0..3.
std::map<std::string, Npy> arrays(const std::string& image_descr = "|u1", std::uint64_t channels = 1) {
  std::vector<std::uint64_t> train_shape = {6, channels, 2, 3}, test_shape = {3, channels, 2, 3};
  const auto count = [](const std::vector<std::uint64_t>& s) { return s[0] * s[1] * s[2] * s[3]; };
  std::map<std::string, Npy> out;
  if (image_descr == "<f4") {
    std::vector<float> train(count(train_shape)), test(count(test_shape));
    for (std::size_t i = 0; i < train.size(); ++i) train[i] = 0.25f * static_cast<float>(i);
    for (std::size_t i = 0; i < test.size(); ++i) test[i] = -0.5f * static_cast<float>(i);
    out["train_images"] = npy("<f4", train_shape, train);
    out["test_images"] = npy("<f4", test_shape, test);
  } else {
    std::vector<std::uint8_t> train(count(train_shape)), test(count(test_shape));
    for (std::size_t i = 0; i < train.size(); ++i) train[i] = static_cast<std::uint8_t>(i * 7);
    for (std::size_t i = 0; i < test.size(); ++i) test[i] = static_cast<std::uint8_t>(200 + i);
    out["train_images"] = npy(image_descr, train_shape, train);
    out["test_images"] = npy(image_descr, test_shape, test);
  }
  out["train_labels"] = npy<std::int64_t>("<i8", {6}, {0, 1, 2, 3, 0, 1});
  out["test_labels"] = npy<std::int32_t>("<i4", {3}, {2, 1, 0});
  return out;
}

std::map<std::string, Bytes> members(const std::map<std::string, Npy>& arrays) {
  std::map<std::string, Bytes> out;
  for (const auto& [name, array] : arrays) out[name + ".npy"] = npy_bytes(array);
  return out;
}

using cmlbed::data::test_support::expect_data_error;

class ArrayFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::path(::testing::TempDir()) / ("cmlbed_arrays_" + test + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const Bytes& bytes) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
    return path;
  }
  std::string npz(const std::map<std::string, Npy>& contents, bool deflated = false, bool zip64 = false) const {
    return write("data.npz", zip(members(contents), deflated, zip64));
  }

  // An HDF5 file with one dataset per array, at the root, as h5py writes them.
  std::string h5(const std::map<std::string, Npy>& contents) const {
    const std::string path = (dir_ / "data.h5").string();
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    for (const auto& [name, array] : contents) {
      const std::map<std::string, hid_t> types = {{"|u1", H5T_STD_U8LE},  {"<i8", H5T_STD_I64LE},
                                                  {"<i4", H5T_STD_I32LE}, {"<f4", H5T_IEEE_F32LE},
                                                  {"<f8", H5T_IEEE_F64LE}};
      std::vector<hsize_t> dims(array.shape.begin(), array.shape.end());
      const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
      const hid_t dataset = H5Dcreate2(file, name.c_str(), types.at(array.descr), space, H5P_DEFAULT,
                                       H5P_DEFAULT, H5P_DEFAULT);
      EXPECT_GE(H5Dwrite(dataset, types.at(array.descr), H5S_ALL, H5S_ALL, H5P_DEFAULT, array.data.data()), 0);
      H5Dclose(dataset);
      H5Sclose(space);
    }
    H5Fclose(file);
    return path;
  }

  fs::path dir_;
};

void expect_small_set(const Dataset& dataset, PixelType type) {
  EXPECT_EQ(dataset.train.size(), 6U);
  EXPECT_EQ(dataset.test.size(), 3U);
  EXPECT_EQ(dataset.train.channels, 1);
  EXPECT_EQ(dataset.train.height, 2);
  EXPECT_EQ(dataset.train.width, 3);
  EXPECT_EQ(dataset.train.num_classes, 4);
  EXPECT_EQ(dataset.test.num_classes, 4);
  EXPECT_EQ(dataset.train.labels, (Bytes{0, 1, 2, 3, 0, 1}));
  EXPECT_EQ(dataset.test.labels, (Bytes{2, 1, 0}));
  EXPECT_EQ(dataset.train.pixel_type, type);
  EXPECT_EQ(dataset.train.pixels.size(), 6U * 6 * (type == PixelType::float32 ? 4 : 1));
}

TEST_F(ArrayFileTest, StoredDeflatedZip64AndHdf5GiveTheSameDataSet) {
  const auto contents = arrays();
  const Dataset stored = read_array_file(npz(contents), kCap);
  expect_small_set(stored, PixelType::uint8);
  for (std::size_t i = 0; i < 36; ++i) EXPECT_EQ(stored.train.pixels[i], static_cast<std::uint8_t>(i * 7));
  for (const Dataset& other : {read_array_file(npz(contents, true), kCap), read_array_file(npz(contents, true, true), kCap),
                               read_array_file(npz(contents, false, true), kCap), read_array_file(h5(contents), kCap)}) {
    expect_small_set(other, PixelType::uint8);
    EXPECT_EQ(other.train.pixels, stored.train.pixels);
    EXPECT_EQ(other.test.pixels, stored.test.pixels);
  }
}

TEST_F(ArrayFileTest, ImagesWithoutAChannelAxisHaveOne) {
  auto contents = arrays();
  contents["train_images"].shape = {6, 2, 3};
  contents["test_images"].shape = {3, 2, 3};
  const ArrayFileSummary summary = inspect_array_file(npz(contents), kCap);
  EXPECT_EQ(summary.channels, 1);
  EXPECT_EQ(summary.height, 2);
  EXPECT_EQ(summary.width, 3);
  expect_small_set(read_array_file(npz(contents), kCap), PixelType::uint8);
}

TEST_F(ArrayFileTest, Float32ImagesAndNormalisationAreKept) {
  auto contents = arrays("<f4", 2);
  contents["mean"] = npy<float>("<f4", {2}, {0.5f, 0.25f});
  contents["std"] = npy<double>("<f8", {2}, {2.0, 4.0});
  for (const std::string& path : {npz(contents, true), h5(contents)}) {
    const ArrayFileSummary summary = inspect_array_file(path, kCap);
    EXPECT_EQ(summary.image_type, ElementType::float32);
    EXPECT_TRUE(summary.normalised);
    EXPECT_EQ(summary.memory_bytes, (6U + 3U) * 12 * 4 + 9);
    const Dataset dataset = read_array_file(path, kCap);
    EXPECT_EQ(dataset.train.pixel_type, PixelType::float32);
    EXPECT_EQ(dataset.train.channel_mean, (std::vector<float>{0.5f, 0.25f}));
    EXPECT_EQ(dataset.test.channel_std, (std::vector<float>{2.0f, 4.0f}));
    float value = 0;
    std::memcpy(&value, dataset.train.pixels.data() + 4 * 5, 4);
    EXPECT_EQ(value, 1.25f);
  }
}

TEST_F(ArrayFileTest, RefusesWhatItCannotUse) {
  const auto with = [](auto change) {
    auto contents = arrays();
    change(contents);
    return contents;
  };
  expect_data_error([&] { read_array_file(npz(with([](auto& c) { c.erase("test_labels"); })), kCap); },
                    {"data.npz", "no array 'test_labels'", "the file holds: test_images, train_images, train_labels"});
  expect_data_error([&] { read_array_file(npz(with([](auto& c) { c["test_images"].shape = {3, 1, 3, 2}; })), kCap); },
                    {"test_images is a uint8 array of shape 3x1x3x2", "same type and sample shape"});
  expect_data_error([&] { read_array_file(npz(with([](auto& c) { c["train_labels"] = npy<std::int64_t>("<i8", {5}, {0, 1, 2, 3, 0}); })), kCap); },
                    {"train_labels holds 5 labels but train_images 6 images"});
  expect_data_error([&] { read_array_file(npz(with([](auto& c) { c["test_labels"] = npy<std::int32_t>("<i4", {3}, {2, -1, 0}); })), kCap); },
                    {"test_labels[1] is -1", "0..K-1"});
  expect_data_error([&] { read_array_file(npz(with([](auto& c) { c["test_labels"] = npy<std::int32_t>("<i4", {3}, {2, 256, 0}); })), kCap); },
                    {"test_labels[1] is 256"});
  expect_data_error([&] {
    read_array_file(npz(with([](auto& c) {
                      c["test_images"] = npy<std::uint8_t>("|u1", {0, 1, 2, 3}, {});
                      c["test_labels"] = npy<std::int64_t>("<i8", {0}, {});
                    })), kCap);
  }, {"test_images holds no samples", "test split is empty"});
  expect_data_error([&] { read_array_file(npz(with([](auto& c) { c["train_images"].descr = "<u2"; c["train_images"].data.resize(72); })), kCap); },
                    {"train_images is a uint16 array", "must be uint8 or float32"});
  expect_data_error([&] { read_array_file(npz(with([](auto& c) { c["train_labels"] = npy<float>("<f4", {6}, {0, 1, 2, 3, 0, 1}); })), kCap); },
                    {"train_labels is a float32 array", "one integer per sample"});
  expect_data_error([&] { read_array_file(npz(with([](auto& c) { c["train_images"].descr = "<c8"; })), kCap); },
                    {"element type '<c8' is not supported"});
  expect_data_error([&] { read_array_file(npz(with([](auto& c) { c["train_images"].descr = ">u2"; c["train_images"].data.resize(72); })), kCap); },
                    {"big-endian"});
  expect_data_error([&] { read_array_file(npz(with([](auto& c) { c["train_images"].fortran = true; })), kCap); },
                    {"Fortran order"});
  expect_data_error([&] { read_array_file(npz(with([](auto& c) { c["mean"] = npy<float>("<f4", {1}, {0.5f}); })), kCap); },
                    {"'mean' without 'std'"});
  expect_data_error([&] {
    read_array_file(npz(with([](auto& c) {
                      c["mean"] = npy<float>("<f4", {1}, {0.5f});
                      c["std"] = npy<float>("<f4", {1}, {0.0f});
                    })), kCap);
  }, {"std[0] is 0", "above 0"});
  expect_data_error([&] { read_array_file(npz(arrays()), 62); }, {"the data set takes", "more than the cap"});
  expect_data_error([&] { read_array_file(npz(with([](auto& c) { c["train_images"].data.pop_back(); })), kCap); },
                    {"train_images.npy", "holds 35 bytes of elements"});
  expect_data_error([&] { read_array_file(write("data.txt", Bytes{1, 2, 3}), kCap); }, {"data.txt", "must end in .npz"});
  expect_data_error([&] { read_array_file(write("data.npz", Bytes(100, 7)), kCap); }, {"not a ZIP archive"});
  expect_data_error([&] { read_array_file(write("data.h5", Bytes(100, 7)), kCap); }, {"not an HDF5 file"});
  expect_data_error([&] { read_array_file((dir_ / "absent.npz").string(), kCap); }, {"absent.npz", "cannot open"});
  auto floats = arrays("<f4");
  reinterpret_cast<float*>(floats["test_images"].data.data())[7] = NAN;
  expect_data_error([&] { read_array_file(npz(floats), kCap); }, {"test_images holds a NaN or an infinity in sample 1", "finite"});
}

TEST_F(ArrayFileTest, CorruptMembersAreCaught) {
  Bytes bytes = zip(members(arrays()), false);
  // A flipped byte in the first member's elements (after its 128-byte .npy header): its
  // CRC no longer matches.
  const std::string name = "test_images.npy";
  const auto at = std::search(bytes.begin(), bytes.end(), name.begin(), name.end()) - bytes.begin();
  bytes[static_cast<std::size_t>(at) + name.size() + 130] ^= 0xff;
  expect_data_error([&] { read_array_file(write("data.npz", bytes), kCap); }, {"test_images.npy", "CRC-32 mismatch"});
  Bytes deflated = zip(members(arrays()), true);
  deflated.resize(deflated.size() / 2);
  expect_data_error([&] { read_array_file(write("data.npz", deflated), kCap); }, {"data.npz"});
}

TEST(NpyHeader, ParsesWhatNumpyWrites) {
  const Bytes bytes = npy_bytes(npy<float>("<f4", {2, 3}, std::vector<float>(6)));
  const ArrayHeader header = parse_npy_header(bytes.data(), bytes.size(), "x.npy");
  EXPECT_EQ(header.type, ElementType::float32);
  EXPECT_EQ(header.shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(npy_data_offset(bytes.data(), bytes.size(), "x.npy"), bytes.size() - 24);
  const Bytes scalar = npy_bytes(npy<std::int64_t>("<i8", {}, {5}));
  EXPECT_TRUE(parse_npy_header(scalar.data(), scalar.size(), "s.npy").shape.empty());
  const Bytes one = npy_bytes(npy<std::int64_t>("<i8", {7}, std::vector<std::int64_t>(7)));
  EXPECT_EQ(parse_npy_header(one.data(), one.size(), "o.npy").shape, (std::vector<std::uint64_t>{7}));
}

}  // namespace
