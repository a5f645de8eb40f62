#include "cmlbed/base/units.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace cmlbed {
namespace {

struct Unit {
  const char* word;
  double factor;
};

// Rates are kept in bits per second.
constexpr Unit kRateUnits[] = {
    {"", 1},          {"bit", 1},       {"kbit", 1e3},          {"mbit", 1e6},
    {"gbit", 1e9},    {"tbit", 1e12},   {"kibit", 1024.0},      {"mibit", 1048576.0},
    {"gibit", 1073741824.0},            {"tibit", 1099511627776.0},
    {"bps", 8},       {"kbps", 8e3},    {"mbps", 8e6},          {"gbps", 8e9},
    {"tbps", 8e12},   {"kibps", 8 * 1024.0},                    {"mibps", 8 * 1048576.0},
    {"gibps", 8 * 1073741824.0},        {"tibps", 8 * 1099511627776.0},
};

constexpr Unit kSizeUnits[] = {
    {"", 1},           {"b", 1},
    {"k", 1024.0},     {"kb", 1024.0},      {"kib", 1024.0},
    {"m", 1048576.0},  {"mb", 1048576.0},   {"mib", 1048576.0},
    {"g", 1073741824.0}, {"gb", 1073741824.0}, {"gib", 1073741824.0},
    {"kbit", 1024.0 / 8}, {"mbit", 1048576.0 / 8}, {"gbit", 1073741824.0 / 8},
};

// Compute rates are kept in floating-point operations per second (not a tc word: these
// pace emulated devices, devices.flops).
constexpr Unit kComputeRateUnits[] = {
    {"flop/s", 1}, {"kflop/s", 1e3}, {"mflop/s", 1e6}, {"gflop/s", 1e9}, {"tflop/s", 1e12},
};

constexpr Unit kDurationUnits[] = {
    {"s", 1e9},   {"sec", 1e9},   {"secs", 1e9},  {"ms", 1e6}, {"msec", 1e6},
    {"msecs", 1e6}, {"us", 1e3},  {"usec", 1e3},  {"usecs", 1e3}, {"ns", 1},
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Splits "12.5mbit" into 12.5 and "mbit"; the number must be finite and non-negative.
template <std::size_t N>
double parse_quantity(std::string_view text, const Unit (&units)[N], const char* what,
                      const char* allowed) {
  const std::string s = lower(text);
  const auto fail = [&](const std::string& why) -> double {
    throw std::invalid_argument("'" + std::string(text) + "' is not a valid " + what + " (" +
                                why + "); allowed: " + allowed);
  };
  if (s.empty()) return fail("empty");
  std::size_t used = 0;
  double number = 0;
  try {
    number = std::stod(s, &used);
  } catch (const std::exception&) {
    return fail("no number");
  }
  // stod accepts "inf", "nan" and hex; a quantity is a plain decimal number.
  if (!std::isfinite(number) || s.find_first_of("xp") < used) return fail("not a finite number");
  if (number < 0 || s[0] == '-') return fail("negative");
  std::string_view suffix(s);
  suffix.remove_prefix(used);
  while (!suffix.empty() && suffix.front() == ' ') suffix.remove_prefix(1);
  for (const Unit& unit : units) {
    if (suffix == unit.word) return number * unit.factor;
  }
  return fail("unknown unit '" + std::string(suffix) + "'");
}

std::string printf_string(const char* format, double value, const char* unit) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value, unit);
  return buffer;
}

}  // namespace

double parse_rate_bits_per_second(std::string_view text) {
  const double rate = parse_quantity(
      text, kRateUnits, "rate",
      "a number with bit kbit mbit gbit (SI bits/s), kibit mibit gibit (IEC bits/s), "
      "bps kbps mbps gbps (BYTES/s), kibps mibps gibps (IEC BYTES/s)");
  if (rate <= 0) {
    throw std::invalid_argument("'" + std::string(text) +
                                "' is not a valid rate (must be positive; leave the option "
                                "empty for an unshaped link)");
  }
  return rate;
}

std::uint64_t parse_size_bytes(std::string_view text) {
  const char* allowed = "a number with b, k kb kib, m mb mib, g gb gib (bytes) or kbit mbit gbit";
  const double bytes = parse_quantity(text, kSizeUnits, "size", allowed);
  if (bytes != std::floor(bytes) || bytes > 9.0e18) {
    throw std::invalid_argument("'" + std::string(text) +
                                "' is not a valid size (not a whole number of bytes); allowed: " +
                                allowed);
  }
  return static_cast<std::uint64_t>(bytes);
}

std::int64_t parse_duration_ns(std::string_view text) {
  const double ns = parse_quantity(text, kDurationUnits, "duration",
                                   "a number with s, ms, us or ns (a unit is required)");
  if (ns > 9.0e18) throw std::invalid_argument("'" + std::string(text) + "' is too long");
  return static_cast<std::int64_t>(std::llround(ns));
}

double parse_compute_rate_flops(std::string_view text) {
  const double rate = parse_quantity(text, kComputeRateUnits, "compute rate",
                                     "a number with flop/s, kflop/s, mflop/s, gflop/s or tflop/s "
                                     "(a unit is required)");
  if (rate <= 0) {
    throw std::invalid_argument("'" + std::string(text) +
                                "' is not a valid compute rate (must be positive; leave the "
                                "option empty to run at this machine's speed)");
  }
  return rate;
}

std::string format_compute_rate(double flops_per_second) {
  if (flops_per_second >= 1e12) return printf_string("%.4g %s", flops_per_second / 1e12, "TFLOP/s");
  if (flops_per_second >= 1e9) return printf_string("%.4g %s", flops_per_second / 1e9, "GFLOP/s");
  if (flops_per_second >= 1e6) return printf_string("%.4g %s", flops_per_second / 1e6, "MFLOP/s");
  if (flops_per_second >= 1e3) return printf_string("%.4g %s", flops_per_second / 1e3, "kFLOP/s");
  return printf_string("%.4g %s", flops_per_second, "FLOP/s");
}

std::string format_rate(double bits_per_second) {
  if (bits_per_second >= 1e9) return printf_string("%.4g %s", bits_per_second / 1e9, "gbit/s");
  if (bits_per_second >= 1e6) return printf_string("%.4g %s", bits_per_second / 1e6, "mbit/s");
  if (bits_per_second >= 1e3) return printf_string("%.4g %s", bits_per_second / 1e3, "kbit/s");
  return printf_string("%.4g %s", bits_per_second, "bit/s");
}

std::string format_size(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= (1ULL << 30)) return printf_string("%.4g %s", b / (1ULL << 30), "GiB");
  if (bytes >= (1ULL << 20)) return printf_string("%.4g %s", b / (1ULL << 20), "MiB");
  if (bytes >= (1ULL << 10)) return printf_string("%.4g %s", b / (1ULL << 10), "KiB");
  return printf_string("%.4g %s", b, "B");
}

std::string format_duration(std::int64_t nanoseconds) {
  const double ns = static_cast<double>(nanoseconds);
  if (nanoseconds >= 1000000000) return printf_string("%.4g %s", ns / 1e9, "s");
  if (nanoseconds >= 1000000) return printf_string("%.4g %s", ns / 1e6, "ms");
  if (nanoseconds >= 1000) return printf_string("%.4g %s", ns / 1e3, "us");
  return printf_string("%.4g %s", ns, "ns");
}

}  // namespace cmlbed
