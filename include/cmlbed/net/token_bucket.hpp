#pragma once
// A token bucket shaper with the semantics of Linux tc's tbf (without peakrate).
//
// The bucket holds up to `burst` bytes of tokens, starts full at the link's start time and
// refills continuously at the current rate. A chunk leaves when the bucket holds enough
// tokens for all of it, in FIFO order. The rate may follow a RateTrace.
//
// Times are int64 nanoseconds on the caller's clock (a virtual one in tests, steady_clock
// in the transport). State is kept in exact integers (picobits, see below): departures are
// the exact analytic times rounded up to the next nanosecond, and the rounding is carried
// forward, so a long stream never drifts.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cmlbed/net/rate_trace.hpp"

namespace cmlbed::net {

namespace detail {
// 128 bits: a burst of many GiB in picobits, or a rate times a long idle time, needs it.
__extension__ typedef __int128 Int128;
}  // namespace detail

class TokenBucket {
 public:
  // Rates are held in whole millibits per second, so this range keeps them exact enough
  // (within 0.05%) and keeps every product in 128 bits.
  static constexpr double kMinRateBitsPerSecond = 1.0;
  static constexpr double kMaxRateBitsPerSecond = 1e15;
  // Throws std::invalid_argument "<what> ... is outside the supported range" if needed.
  static void check_rate(double bits_per_second, const std::string& what);

  // A constant rate. Throws std::invalid_argument for a rate outside the range above or
  // a zero burst.
  TokenBucket(double rate_bits_per_second, std::uint64_t burst_bytes, std::int64_t start_ns);

  // A rate from `trace` (times relative to start_ns). Before its first point the base rate
  // applies, or, without one, no shaping at all (the bucket stays full).
  TokenBucket(std::optional<double> base_rate_bits_per_second, const RateTrace& trace,
              std::uint64_t burst_bytes, std::int64_t start_ns);

  // Reserves `bytes` (at most burst_bytes(), else std::invalid_argument) and returns the
  // departure: the earliest time >= now_ns, >= the previous departure and >= start_ns at
  // which the bucket holds `bytes` of tokens. Those tokens are consumed then.
  std::int64_t reserve(std::uint64_t bytes, std::int64_t now_ns);

  std::uint64_t burst_bytes() const { return burst_bytes_; }

 private:
  using Picobits = detail::Int128;  // 1e-12 bit: millibits/s times ns

  // The rate from begin_ns until the next step; 0 millibits/s means unshaped.
  struct Step {
    std::int64_t begin_ns;
    std::int64_t millibits_per_second;
  };

  static std::vector<Step> steps_of_trace(std::optional<double> base_rate_bits_per_second,
                                          const RateTrace& trace, std::int64_t start_ns);
  TokenBucket(std::vector<Step> steps, std::uint64_t burst_bytes);
  std::int64_t step_end_ns() const;
  void add_tokens_for(std::int64_t duration_ns);
  void enter_steps_begun();
  void advance_to(std::int64_t time_ns);
  std::int64_t wait_for(Picobits needed);

  std::vector<Step> steps_;     // sorted; steps_[0].begin_ns is the start time
  std::size_t step_index_ = 0;  // the step holding clock_ns_
  std::uint64_t burst_bytes_;
  Picobits capacity_;
  Picobits tokens_;        // at clock_ns_
  std::int64_t clock_ns_;  // the start, then the last departure
};

}  // namespace cmlbed::net
