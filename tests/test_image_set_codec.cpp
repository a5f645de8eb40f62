// The byte form of an ImageSet (how the server hands a device its share): it reads
// back exactly, and malformed bytes are refused with a DataError instead of trusted.
#include <gtest/gtest.h>

#include "cmlbed/data/data_error.hpp"
#include "cmlbed/data/image_set_codec.hpp"

namespace cmlbed::data {
namespace {

ImageSet sample_set(std::size_t samples) {
  ImageSet set;
  set.channels = 3;
  set.height = 4;
  set.width = 5;
  set.num_classes = 7;
  for (std::size_t i = 0; i < samples; ++i) {
    set.labels.push_back(static_cast<std::uint8_t>(i % 7));
    for (std::size_t b = 0; b < set.sample_bytes(); ++b) set.pixels.push_back(static_cast<std::uint8_t>(i * 31 + b));
  }
  return set;
}

void expect_same(const ImageSet& a, const ImageSet& b) {
  EXPECT_EQ(a.channels, b.channels);
  EXPECT_EQ(a.height, b.height);
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.num_classes, b.num_classes);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.pixels, b.pixels);
  EXPECT_EQ(a.pixel_type, b.pixel_type);
  EXPECT_EQ(a.channel_mean, b.channel_mean);
  EXPECT_EQ(a.channel_std, b.channel_std);
}

TEST(ImageSetCodec, ReadsBackExactly) {
  for (std::size_t samples : {0u, 1u, 13u}) {
    const ImageSet set = sample_set(samples);
    const std::vector<std::uint8_t> bytes = encode_image_set(set);
    EXPECT_EQ(bytes.size(), 56 + samples * (1 + 60));
    expect_same(decode_image_set(bytes), set);
  }
}

// Float32 pixels (data.dataset = arrays) and a per-channel normalisation travel too.
TEST(ImageSetCodec, CarriesFloatPixelsAndNormalisation) {
  ImageSet set;
  set.channels = 2;
  set.height = 1;
  set.width = 3;
  set.num_classes = 4;
  set.pixel_type = PixelType::float32;
  set.channel_mean = {0.5f, -1.25f};
  set.channel_std = {2.0f, 0.125f};
  for (std::size_t i = 0; i < 5; ++i) {
    set.labels.push_back(static_cast<std::uint8_t>(i % 4));
    for (std::size_t b = 0; b < set.sample_bytes(); ++b) set.pixels.push_back(static_cast<std::uint8_t>(i * 17 + b));
  }
  EXPECT_EQ(set.sample_bytes(), 24U);
  const std::vector<std::uint8_t> bytes = encode_image_set(set);
  EXPECT_EQ(bytes.size(), 56 + 2 * 2 * 4 + 5 * (1 + 24));
  expect_same(decode_image_set(bytes), set);
  std::vector<std::uint8_t> bad_type = bytes;
  bad_type[40] = 2;
  EXPECT_THROW(decode_image_set(bad_type), DataError);
  std::vector<std::uint8_t> bad_normalised = bytes;
  bad_normalised[48] = 1;  // one normalised channel of two
  EXPECT_THROW(decode_image_set(bad_normalised), DataError);
  const ImageSet subset = set.subset({4, 1});
  EXPECT_EQ(subset.pixel_type, PixelType::float32);
  EXPECT_EQ(subset.channel_std, set.channel_std);
  EXPECT_EQ(std::vector<std::uint8_t>(subset.pixels.begin(), subset.pixels.begin() + 24),
            std::vector<std::uint8_t>(set.pixels.begin() + 4 * 24, set.pixels.end()));
}

TEST(ImageSetCodec, RefusesMalformedBytes) {
  const std::vector<std::uint8_t> good = encode_image_set(sample_set(3));
  EXPECT_THROW(decode_image_set({}), DataError);
  EXPECT_THROW(decode_image_set(std::vector<std::uint8_t>(good.begin(), good.begin() + 55)), DataError);
  std::vector<std::uint8_t> short_one(good.begin(), good.end() - 1);
  EXPECT_THROW(decode_image_set(short_one), DataError);
  std::vector<std::uint8_t> long_one = good;
  long_one.push_back(0);
  EXPECT_THROW(decode_image_set(long_one), DataError);
  std::vector<std::uint8_t> bad_label = good;
  bad_label[56] = 7;  // classes = 7
  EXPECT_THROW(decode_image_set(bad_label), DataError);
  std::vector<std::uint8_t> huge = good;
  huge[7] = 0x40;  // a sample count of 2^62 must not overflow the length check
  EXPECT_THROW(decode_image_set(huge), DataError);
  std::vector<std::uint8_t> no_classes = good;
  no_classes[32] = 0;
  EXPECT_THROW(decode_image_set(no_classes), DataError);
}

}  // namespace
}  // namespace cmlbed::data
