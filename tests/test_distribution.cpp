// Per-device values drawn from distributions: parsing (in the option's units, with
// messages that say why), deterministic and independent draws with the right moments,
// and the configuration reading them per device within the option's range.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cmlbed/base/units.hpp"
#include "cmlbed/config/config.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/distribution.hpp"

namespace cmlbed {
namespace {

double rate(const std::string& text) { return parse_rate_bits_per_second(text); }

std::string parse_error(const std::string& text) {
  try {
    parse_distribution(text, rate);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Distribution, ParsesInTheOptionsUnits) {
  EXPECT_FALSE(parse_distribution("10mbit", rate));
  const auto uniform = parse_distribution("uniform(5mbit,50mbit)", rate);
  ASSERT_TRUE(uniform);
  EXPECT_EQ(uniform->kind, Distribution::Kind::uniform);
  EXPECT_DOUBLE_EQ(uniform->first, 5e6);
  EXPECT_DOUBLE_EQ(uniform->second, 5e7);
  const auto lognormal = parse_distribution("lognormal(2mbps,0.5)", rate);
  ASSERT_TRUE(lognormal);
  EXPECT_DOUBLE_EQ(lognormal->first, 16e6);  // tc's mbps: megabytes per second
  EXPECT_DOUBLE_EQ(lognormal->second, 0.5);
}

TEST(Distribution, SaysWhyItRefuses) {
  EXPECT_NE(parse_error("normal(1mbit,2mbit)").find("unknown distribution 'normal'"), std::string::npos);
  EXPECT_NE(parse_error("uniform(1mbit)").find("two arguments"), std::string::npos);
  EXPECT_NE(parse_error("uniform(1mbit,2mbit,3mbit)").find("two arguments"), std::string::npos);
  EXPECT_NE(parse_error("uniform(9mbit,2mbit)").find("LOW is above HIGH"), std::string::npos);
  EXPECT_NE(parse_error("lognormal(1mbit,-1)").find("SIGMA"), std::string::npos);
  EXPECT_NE(parse_error("lognormal(1mbit,x)").find("SIGMA"), std::string::npos);
  EXPECT_FALSE(parse_error("uniform(fast,2mbit)").empty());
}

TEST(Distribution, DrawsAreDeterministicAndIndependent) {
  const Distribution d{Distribution::Kind::uniform, 0, 1};
  EXPECT_EQ(draw(d, 1, "devices.slowdown", 3), draw(d, 1, "devices.slowdown", 3));
  EXPECT_NE(draw(d, 1, "devices.slowdown", 3), draw(d, 1, "devices.slowdown", 4));
  EXPECT_NE(draw(d, 1, "devices.slowdown", 3), draw(d, 2, "devices.slowdown", 3));
  EXPECT_NE(draw(d, 1, "devices.slowdown", 3), draw(d, 1, "devices.flops", 3));
}

TEST(Distribution, UniformAndLognormalHaveTheirMoments) {
  constexpr int kDevices = 20000;
  const Distribution uniform{Distribution::Kind::uniform, 2, 6};
  double sum = 0, low = 1e300, high = -1e300;
  for (int k = 1; k <= kDevices; ++k) {
    const double x = draw(uniform, 7, "devices.slowdown", k);
    sum += x, low = std::min(low, x), high = std::max(high, x);
  }
  EXPECT_NEAR(sum / kDevices, 4.0, 0.04);
  EXPECT_GE(low, 2.0);
  EXPECT_LT(high, 6.0);
  EXPECT_LT(low, 2.01);
  EXPECT_GT(high, 5.99);

  const Distribution lognormal{Distribution::Kind::lognormal, 1e7, 0.5};
  std::vector<double> logs;
  for (int k = 1; k <= kDevices; ++k) logs.push_back(std::log(draw(lognormal, 7, "network.uplink_rate", k)));
  double mean = 0, square = 0;
  for (const double l : logs) mean += l / kDevices;
  for (const double l : logs) square += (l - mean) * (l - mean) / kDevices;
  EXPECT_NEAR(mean, std::log(1e7), 0.02);  // the median's logarithm
  EXPECT_NEAR(std::sqrt(square), 0.5, 0.015);
}

Config resolve(const std::vector<RawSetting>& settings) { return Config::resolve(settings, {}); }

TEST(Distribution, ConfigDrawsPerDeviceWithinTheOptionsRange) {
  const Config config = resolve({{"devices.slowdown", "uniform(2,6)", "test"},
                                 {"network.uplink_rate", "uniform(5mbit,50mbit)", "test"},
                                 {"device.2.slowdown", "3", "test"}});
  std::vector<double> slowdowns;
  for (int d = 1; d <= 50; ++d) {
    const double s = config.real("devices.slowdown", d);
    const double r = *config.rate_bits_per_second("network.uplink_rate", d);
    EXPECT_GE(s, 2);
    EXPECT_LE(s, 6);
    EXPECT_GE(r, 5e6);
    EXPECT_LE(r, 5e7);
    slowdowns.push_back(s);
  }
  EXPECT_EQ(slowdowns[1], 3.0);  // device 2's own value
  std::sort(slowdowns.begin(), slowdowns.end());
  EXPECT_LT(std::unique(slowdowns.begin(), slowdowns.end()) - slowdowns.begin(), 51);
  EXPECT_GT(std::unique(slowdowns.begin(), slowdowns.end()) - slowdowns.begin(), 45);
  // Clamped: a lognormal's tail below slowdown's minimum of 1 reads as 1.
  const Config wide = resolve({{"devices.slowdown", "lognormal(1,3)", "test"}});
  for (int d = 1; d <= 50; ++d) EXPECT_GE(wide.real("devices.slowdown", d), 1.0);
}

TEST(Distribution, ConfigRefusesWhatCannotBeDrawn) {
  const auto message = [](const std::vector<RawSetting>& settings) {
    try {
      resolve(settings);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message({{"devices.slowdown", "uniform(0.5,2)", "test"}}).find("out of range"), std::string::npos);
  EXPECT_NE(message({{"network.delay", "uniform(1ms,2ms)", "test"}}).find("network.delay"), std::string::npos);
  EXPECT_NE(message({{"devices.flops", "lognormal(2GFLOP/s,20)", "test"}}).find("SIGMA"), std::string::npos);
}

}  // namespace
}  // namespace cmlbed
