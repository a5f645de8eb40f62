#include "cmlbed/net/token_bucket.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "cmlbed/base/units.hpp"

namespace cmlbed::net {
namespace {

using detail::Int128;

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
constexpr Int128 kPicobitsPerByte = Int128{8} * 1000000000000;

// Rounds to whole millibits per second, the unit that makes refill exact in picobits.
std::int64_t to_millibits_per_second(double bits_per_second) {
  TokenBucket::check_rate(bits_per_second, "link rate");
  return static_cast<std::int64_t>(std::llround(bits_per_second * 1000));
}

Int128 ceil_div(Int128 numerator, Int128 denominator) {
  return (numerator + denominator - 1) / denominator;
}

}  // namespace

void TokenBucket::check_rate(double bits_per_second, const std::string& what) {
  if (!(bits_per_second >= kMinRateBitsPerSecond && bits_per_second <= kMaxRateBitsPerSecond)) {
    throw std::invalid_argument(what + " " + format_rate(bits_per_second) +
                                " is outside the supported range 1 bit/s to 1e15 bit/s");
  }
}

TokenBucket::TokenBucket(double rate_bits_per_second, std::uint64_t burst_bytes,
                         std::int64_t start_ns)
    : TokenBucket(std::vector<Step>{{start_ns, to_millibits_per_second(rate_bits_per_second)}},
                  burst_bytes) {}

TokenBucket::TokenBucket(std::optional<double> base_rate_bits_per_second, const RateTrace& trace,
                         std::uint64_t burst_bytes, std::int64_t start_ns)
    : TokenBucket(steps_of_trace(base_rate_bits_per_second, trace, start_ns), burst_bytes) {}

std::vector<TokenBucket::Step> TokenBucket::steps_of_trace(
    std::optional<double> base_rate_bits_per_second, const RateTrace& trace,
    std::int64_t start_ns) {
  const std::int64_t base =
      base_rate_bits_per_second ? to_millibits_per_second(*base_rate_bits_per_second) : 0;
  std::vector<Step> steps{{start_ns, base}};
  for (std::size_t i = 0; i < trace.points().size(); ++i) {
    const Step step{start_ns + trace.offsets_ns()[i],
                    to_millibits_per_second(trace.points()[i].bits_per_second)};
    // A point at time 0 replaces the base rate rather than following it.
    if (step.begin_ns == steps.back().begin_ns) {
      steps.back() = step;
    } else {
      steps.push_back(step);
    }
  }
  return steps;
}

TokenBucket::TokenBucket(std::vector<Step> steps, std::uint64_t burst_bytes)
    : steps_(std::move(steps)),
      burst_bytes_(burst_bytes),
      capacity_(Int128{burst_bytes} * kPicobitsPerByte),
      tokens_(capacity_),
      clock_ns_(steps_.front().begin_ns) {
  if (burst_bytes == 0) throw std::invalid_argument("token bucket burst must be at least 1 byte");
}

std::int64_t TokenBucket::step_end_ns() const {
  return step_index_ + 1 < steps_.size() ? steps_[step_index_ + 1].begin_ns : kNever;
}

// Refill at the current step's rate, capped at the burst. Capping at the end is the same
// as capping continuously because refill only ever adds.
void TokenBucket::add_tokens_for(std::int64_t duration_ns) {
  const std::int64_t rate = steps_[step_index_].millibits_per_second;
  if (rate == 0) {  // unshaped: the bucket is always full
    tokens_ = capacity_;
    return;
  }
  if (tokens_ >= capacity_) return;
  // Compare durations rather than multiply first, so a long idle time cannot overflow.
  if (duration_ns >= ceil_div(capacity_ - tokens_, rate)) {
    tokens_ = capacity_;
  } else {
    tokens_ += Int128{duration_ns} * rate;
  }
}

// Moves step_index_ to the step holding clock_ns_ (a departure may land exactly on the
// next step's begin).
void TokenBucket::enter_steps_begun() {
  while (step_index_ + 1 < steps_.size() && steps_[step_index_ + 1].begin_ns <= clock_ns_) {
    ++step_index_;
    // Entering an unshaped step fills the bucket at once.
    if (steps_[step_index_].millibits_per_second == 0) tokens_ = capacity_;
  }
}

void TokenBucket::advance_to(std::int64_t time_ns) {
  for (enter_steps_begun(); clock_ns_ < time_ns; enter_steps_begun()) {
    const std::int64_t until = std::min(time_ns, step_end_ns());
    add_tokens_for(until - clock_ns_);
    clock_ns_ = until;
  }
}

// Advances the clock to the first whole nanosecond at which the bucket holds `needed`.
// The chunk really leaves at the exact (fractional) time T, is reported at ceil(T), and
// the tokens refilled from T to ceil(T) stay in the bucket (uncapped: it was emptied at
// T). That is what keeps a long stream free of drift.
std::int64_t TokenBucket::wait_for(Picobits needed) {
  while (tokens_ < needed) {
    const std::int64_t rate = steps_[step_index_].millibits_per_second;
    if (rate == 0) {  // unshaped: the bucket is always full
      tokens_ = capacity_;
      break;
    }
    const Int128 wait_ns = ceil_div(needed - tokens_, rate);
    const std::int64_t end_ns = step_end_ns();
    if (wait_ns <= Int128{end_ns} - clock_ns_) {
      clock_ns_ += static_cast<std::int64_t>(wait_ns);
      tokens_ += wait_ns * rate;
      enter_steps_begun();
    } else if (end_ns == kNever) {
      throw std::overflow_error("token bucket departure beyond the int64 nanosecond clock");
    } else {
      advance_to(end_ns);
    }
  }
  return clock_ns_;
}

std::int64_t TokenBucket::reserve(std::uint64_t bytes, std::int64_t now_ns) {
  if (bytes > burst_bytes_) {
    throw std::invalid_argument(
        "chunk of " + std::to_string(bytes) + " bytes exceeds the token bucket burst of " +
        std::to_string(burst_bytes_) + " bytes; cut messages into chunks of at most the burst");
  }
  advance_to(std::max(now_ns, clock_ns_));  // FIFO: never before the previous departure
  const Picobits needed = Int128{bytes} * kPicobitsPerByte;
  const std::int64_t departure_ns = wait_for(needed);
  // Less than a nanosecond of refill is left over, which can only top a full bucket when
  // the burst is under one nanosecond of traffic.
  tokens_ = std::min(tokens_ - needed, capacity_);
  return departure_ns;
}

}  // namespace cmlbed::net
