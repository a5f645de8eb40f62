#include "cmlbed/net/rate_trace.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "cmlbed/base/units.hpp"

namespace cmlbed::net {
namespace {

// Times beyond this do not fit int64 nanoseconds (about 292 years).
constexpr double kMaxTraceSeconds = 9.2e9;

std::string number_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", value);
  return buffer;
}

std::int64_t seconds_to_ns(double seconds) {
  return static_cast<std::int64_t>(std::llround(seconds * 1e9));
}

// The problem with `point` following `previous` (nullptr for the first point), or "".
// Shared by the constructor and the file parser so both say the same thing.
std::string point_problem(const RatePoint* previous, const RatePoint& point) {
  if (!std::isfinite(point.t_seconds)) return "time is not a finite number";
  if (point.t_seconds < 0) return "time " + number_text(point.t_seconds) + " s is negative";
  if (point.t_seconds > kMaxTraceSeconds) {
    return "time " + number_text(point.t_seconds) + " s is too large";
  }
  if (!std::isfinite(point.bits_per_second) || point.bits_per_second <= 0) {
    return "rate must be positive";
  }
  if (previous != nullptr) {
    const std::string times = "time " + number_text(point.t_seconds) + " s after " +
                              number_text(previous->t_seconds) + " s";
    if (point.t_seconds == previous->t_seconds) return times + " repeats a time";
    if (point.t_seconds < previous->t_seconds) return times + " goes backwards";
    // The shaper works in whole nanoseconds; two points in one nanosecond would collapse.
    if (seconds_to_ns(point.t_seconds) <= seconds_to_ns(previous->t_seconds)) {
      return times + " is less than 1 ns later";
    }
  }
  return {};
}

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// A plain decimal number of seconds; nullopt when it is not one (strtod alone would also
// take "inf", "nan", hex and trailing garbage).
std::optional<double> parse_seconds(std::string_view text) {
  const std::string s(text);
  if (s.empty() || s.find_first_of("xXpP") != std::string::npos) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(value)) return std::nullopt;
  return value;
}

bool is_header(std::string_view time_field, std::string_view rate_field) {
  return time_field == "t_seconds" && rate_field == "rate";
}

}  // namespace

RateTrace::RateTrace(std::vector<RatePoint> points) : points_(std::move(points)) {
  if (points_.empty()) throw std::invalid_argument("rate trace has no points");
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const std::string problem = point_problem(i == 0 ? nullptr : &points_[i - 1], points_[i]);
    if (!problem.empty()) {
      throw std::invalid_argument("rate trace point " + std::to_string(i + 1) + ": " + problem);
    }
    offsets_ns_.push_back(seconds_to_ns(points_[i].t_seconds));
  }
}

std::optional<double> RateTrace::rate_at(std::int64_t ns_since_start,
                                         std::optional<double> base_rate_bits_per_second) const {
  // The last point at or before the time holds.
  const auto after = std::upper_bound(offsets_ns_.begin(), offsets_ns_.end(), ns_since_start);
  if (after == offsets_ns_.begin()) return base_rate_bits_per_second;
  return points_[static_cast<std::size_t>(std::distance(offsets_ns_.begin(), after) - 1)]
      .bits_per_second;
}

namespace {

// A trace file is at most 16 MiB (some 800,000 points of 't_seconds,rate'), read in
// chunks up to that: a path to something without end (/dev/zero) or to a large file that
// is not a trace must cost an error, not memory.
constexpr std::size_t kMaxTraceFileBytes = std::size_t{16} << 20;

std::string read_trace_text(const std::string& path, const std::string& where) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::invalid_argument(where + ": cannot open (" + std::strerror(errno) + ")");
  std::string text;
  char chunk[1 << 16];
  while (file.read(chunk, sizeof chunk) || file.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(file.gcount()));
    if (text.size() > kMaxTraceFileBytes) {
      throw std::invalid_argument(where + ": larger than a trace may be (at most " +
                                  std::to_string(kMaxTraceFileBytes >> 20) + " MiB)");
    }
  }
  if (file.bad()) throw std::invalid_argument(where + ": read error");
  return text;
}

}  // namespace

RateTrace parse_rate_trace_file(const std::string& path) {
  const std::string where = "rate trace '" + path + "'";
  std::istringstream in(read_trace_text(path, where));

  std::vector<RatePoint> points;
  bool seen_data = false;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const auto fail = [&](const std::string& problem) {
      throw std::invalid_argument(where + " line " + std::to_string(number) + ": " + problem);
    };
    std::string_view content(line);
    content = trim(content.substr(0, content.find('#')));
    if (content.empty()) continue;

    const std::size_t comma = content.find(',');
    if (comma == std::string_view::npos || content.find(',', comma + 1) != std::string_view::npos) {
      fail("expected 't_seconds,rate' (e.g. '0,10mbit'), got '" + std::string(content) + "'");
    }
    const std::string_view time_field = trim(content.substr(0, comma));
    const std::string_view rate_field = trim(content.substr(comma + 1));
    if (!seen_data && is_header(time_field, rate_field)) {
      seen_data = true;
      continue;
    }
    seen_data = true;

    const std::optional<double> seconds = parse_seconds(time_field);
    if (!seconds) fail("time '" + std::string(time_field) + "' is not a number of seconds");
    RatePoint point{*seconds, 0};
    try {
      point.bits_per_second = parse_rate_bits_per_second(rate_field);
    } catch (const std::invalid_argument& error) {
      fail(error.what());
    }
    const std::string problem = point_problem(points.empty() ? nullptr : &points.back(), point);
    if (!problem.empty()) fail(problem);
    points.push_back(point);
  }
  if (points.empty()) {
    throw std::invalid_argument(where +
                                ": no points (expected lines 't_seconds,rate', e.g. '0,10mbit')");
  }
  return RateTrace(std::move(points));
}

}  // namespace cmlbed::net
