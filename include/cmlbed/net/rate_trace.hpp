#pragma once
// A link rate that changes over time (a "rate trace"), e.g. a cellular uplink recorded
// in the field or a scripted drop from 10 to 2 mbit/s after 30 s.
//
// File format, one point per line: `t_seconds,rate`, e.g.
//     # t_seconds,rate     comments and blank lines are allowed
//     t_seconds,rate       an optional header, as the first line with data
//     0,10mbit
//     30,2mbit
// The rate is in tc units (see base/units.hpp: `mbit` is bits/s, `mbps` is BYTES/s).
// Times are seconds since the link started, >= 0 and strictly increasing. The rate is
// piecewise constant: each point's rate holds until the next point.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cmlbed::net {

struct RatePoint {
  double t_seconds;        // since the link started
  double bits_per_second;  // from this time until the next point
};

class RateTrace {
 public:
  // Throws std::invalid_argument naming the offending point (1-based) when the list is
  // empty, a time is negative or not after the previous one, or a rate is not positive.
  explicit RateTrace(std::vector<RatePoint> points);

  const std::vector<RatePoint>& points() const { return points_; }
  // The point times in whole nanoseconds since the link started (what the shaper uses).
  const std::vector<std::int64_t>& offsets_ns() const { return offsets_ns_; }

  // The rate at `ns_since_start`. Before the first point, `base_rate_bits_per_second`
  // applies; nullopt means unshaped there.
  std::optional<double> rate_at(std::int64_t ns_since_start,
                                std::optional<double> base_rate_bits_per_second = {}) const;

 private:
  std::vector<RatePoint> points_;
  std::vector<std::int64_t> offsets_ns_;
};

// Reads a trace file (format above). Throws std::invalid_argument with one line naming the
// file and, where it applies, the line number and the problem.
RateTrace parse_rate_trace_file(const std::string& path);

}  // namespace cmlbed::net
