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
}

TEST(ImageSetCodec, ReadsBackExactly) {
  for (std::size_t samples : {0u, 1u, 13u}) {
    const ImageSet set = sample_set(samples);
    const std::vector<std::uint8_t> bytes = encode_image_set(set);
    EXPECT_EQ(bytes.size(), 40 + samples * (1 + 60));
    expect_same(decode_image_set(bytes), set);
  }
}

TEST(ImageSetCodec, RefusesMalformedBytes) {
  const std::vector<std::uint8_t> good = encode_image_set(sample_set(3));
  EXPECT_THROW(decode_image_set({}), DataError);
  EXPECT_THROW(decode_image_set(std::vector<std::uint8_t>(good.begin(), good.begin() + 39)), DataError);
  std::vector<std::uint8_t> short_one(good.begin(), good.end() - 1);
  EXPECT_THROW(decode_image_set(short_one), DataError);
  std::vector<std::uint8_t> long_one = good;
  long_one.push_back(0);
  EXPECT_THROW(decode_image_set(long_one), DataError);
  std::vector<std::uint8_t> bad_label = good;
  bad_label[40] = 7;  // classes = 7
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
