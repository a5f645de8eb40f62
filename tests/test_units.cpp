// tc-style quantities, including tc's bits/bytes trap.
#include <gtest/gtest.h>

#include "cmlbed/base/image_shape.hpp"
#include "cmlbed/base/units.hpp"

namespace cmlbed {
namespace {

TEST(Units, RatesInBitsAreSi) {
  EXPECT_DOUBLE_EQ(parse_rate_bits_per_second("10mbit"), 10e6);
  EXPECT_DOUBLE_EQ(parse_rate_bits_per_second("1gbit"), 1e9);
  EXPECT_DOUBLE_EQ(parse_rate_bits_per_second("250kbit"), 250e3);
  EXPECT_DOUBLE_EQ(parse_rate_bits_per_second("800bit"), 800);
  EXPECT_DOUBLE_EQ(parse_rate_bits_per_second("800"), 800);  // tc: bare number = bit/s
  EXPECT_DOUBLE_EQ(parse_rate_bits_per_second("2.5MBit"), 2.5e6);  // tc is case-blind
}

TEST(Units, RatesInBpsAreBytesPerSecond) {
  // The classic trap: 1mbps is one megaBYTE per second, 8 times 1mbit.
  EXPECT_DOUBLE_EQ(parse_rate_bits_per_second("1mbps"), 8e6);
  EXPECT_DOUBLE_EQ(parse_rate_bits_per_second("1mbps"), 8 * parse_rate_bits_per_second("1mbit"));
  EXPECT_DOUBLE_EQ(parse_rate_bits_per_second("100kbps"), 800e3);
  EXPECT_DOUBLE_EQ(parse_rate_bits_per_second("3bps"), 24);
}

TEST(Units, IecRates) {
  EXPECT_DOUBLE_EQ(parse_rate_bits_per_second("1kibit"), 1024);
  EXPECT_DOUBLE_EQ(parse_rate_bits_per_second("1mibit"), 1048576);
  EXPECT_DOUBLE_EQ(parse_rate_bits_per_second("1mibps"), 8 * 1048576.0);
}

TEST(Units, InvalidRates) {
  for (const char* bad : {"50mbitt", "-5mbit", "0mbit", "0", "", "mbit", "fast", "10 mbit/s",
                          "nanmbit", "infbit", "0x10mbit"}) {
    EXPECT_THROW(parse_rate_bits_per_second(bad), std::invalid_argument) << bad;
  }
}

TEST(Units, InvalidRateMessageNamesTextAndUnits) {
  try {
    parse_rate_bits_per_second("50mbitt");
    FAIL();
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("50mbitt"), std::string::npos);
    EXPECT_NE(message.find("mbitt"), std::string::npos);
    EXPECT_NE(message.find("BYTES"), std::string::npos);
  }
}

TEST(Units, SizesFollowTc) {
  EXPECT_EQ(parse_size_bytes("1500"), 1500u);
  EXPECT_EQ(parse_size_bytes("1500b"), 1500u);
  EXPECT_EQ(parse_size_bytes("32kb"), 32u * 1024);  // tc: kb = 1024 bytes
  EXPECT_EQ(parse_size_bytes("32k"), 32u * 1024);
  EXPECT_EQ(parse_size_bytes("8MiB"), 8u << 20);
  EXPECT_EQ(parse_size_bytes("1mb"), 1u << 20);
  EXPECT_EQ(parse_size_bytes("2g"), 2ull << 30);
  EXPECT_EQ(parse_size_bytes("8kbit"), 1024u);  // bits: 8 * 1024 / 8 bytes
  EXPECT_EQ(parse_size_bytes("0.5kb"), 512u);
  for (const char* bad : {"1.3b", "-1kb", "kb", "12 apples", "10mbps"}) {
    EXPECT_THROW(parse_size_bytes(bad), std::invalid_argument) << bad;
  }
}

TEST(Units, DurationsNeedAUnit) {
  EXPECT_EQ(parse_duration_ns("20ms"), 20000000);
  EXPECT_EQ(parse_duration_ns("1.5s"), 1500000000);
  EXPECT_EQ(parse_duration_ns("250us"), 250000);
  EXPECT_EQ(parse_duration_ns("0ms"), 0);
  EXPECT_EQ(parse_duration_ns("3usecs"), 3000);
  for (const char* bad : {"20", "-1ms", "20 minutes", ""}) {
    EXPECT_THROW(parse_duration_ns(bad), std::invalid_argument) << bad;
  }
}

TEST(Units, Formatting) {
  EXPECT_EQ(format_rate(10e6), "10 mbit/s");
  EXPECT_EQ(format_size(64 * 1024), "64 KiB");
  EXPECT_EQ(format_duration(2500000), "2.5 ms");
}

TEST(Units, ComputeRatesAreSiFlopsPerSecond) {
  EXPECT_DOUBLE_EQ(parse_compute_rate_flops("2GFLOP/s"), 2e9);
  EXPECT_DOUBLE_EQ(parse_compute_rate_flops("500 mflop/s"), 5e8);
  EXPECT_DOUBLE_EQ(parse_compute_rate_flops("1.5tflop/s"), 1.5e12);
  EXPECT_DOUBLE_EQ(parse_compute_rate_flops("7flop/s"), 7);
  for (const char* bad : {"2", "2g", "2gflops", "0gflop/s", "-1gflop/s", "inf gflop/s", ""}) {
    EXPECT_THROW(parse_compute_rate_flops(bad), std::invalid_argument) << bad;
  }
  EXPECT_EQ(format_compute_rate(2e9), "2 GFLOP/s");
  EXPECT_EQ(format_compute_rate(2.5e8), "250 MFLOP/s");
}

TEST(ImageShapes, ParseAndReject) {
  EXPECT_EQ(parse_image_shape("3x32x32"), (ImageShape{3, 32, 32}));
  EXPECT_EQ(parse_image_shape("1X28X28").to_string(), "1x28x28");
  for (const char* bad : {"3x32", "3x32x32x1", "0x28x28", "x28x28", "3x32x99999", "axbxc", ""}) {
    EXPECT_THROW(parse_image_shape(bad), std::invalid_argument) << bad;
  }
}

}  // namespace
}  // namespace cmlbed
