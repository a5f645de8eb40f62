#include "cmlbed/net/link.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace cmlbed::net {
void validate_link_spec(const LinkSpec& spec) {
  if (spec.burst_bytes == 0) {
    throw std::invalid_argument("link burst must be at least 1 byte (it is the token bucket size)");
  }
  if (spec.delay_ns < 0) throw std::invalid_argument("link delay must not be negative");
  if (spec.jitter_ns < 0) throw std::invalid_argument("link jitter must not be negative");
  if (spec.jitter_ns > spec.delay_ns) {
    throw std::invalid_argument(
        "link jitter (" + std::to_string(spec.jitter_ns) + " ns) must not exceed the delay (" +
        std::to_string(spec.delay_ns) +
        " ns): the delay would have to go negative (netem would instead reorder packets)");
  }
  if (spec.rate_bits_per_second) TokenBucket::check_rate(*spec.rate_bits_per_second, "link rate");
  if (spec.trace) {
    for (std::size_t i = 0; i < spec.trace->points().size(); ++i) {
      TokenBucket::check_rate(spec.trace->points()[i].bits_per_second,
                              "rate trace point " + std::to_string(i + 1) + ": rate");
    }
  }
}

std::optional<double> rate_at(const LinkSpec& spec, std::int64_t ns_since_start) {
  return spec.trace ? spec.trace->rate_at(ns_since_start, spec.rate_bits_per_second) : spec.rate_bits_per_second;
}

LinkSpec held_at(const LinkSpec& spec, std::int64_t ns_since_start) {
  LinkSpec held = spec;
  held.rate_bits_per_second = rate_at(spec, ns_since_start);
  held.trace.reset();
  return held;
}

namespace {

std::optional<TokenBucket> make_bucket(const LinkSpec& spec, std::int64_t start_ns) {
  validate_link_spec(spec);
  if (spec.trace) {
    return TokenBucket(spec.rate_bits_per_second, *spec.trace, spec.burst_bytes, start_ns);
  }
  if (spec.rate_bits_per_second) {
    return TokenBucket(*spec.rate_bits_per_second, spec.burst_bytes, start_ns);
  }
  return std::nullopt;
}

}  // namespace

Link::Link(const LinkSpec& spec, std::int64_t start_ns)
    : bucket_(make_bucket(spec, start_ns)),
      delay_ns_(spec.delay_ns),
      jitter_ns_(spec.jitter_ns),
      random_(spec.seed),
      last_departure_ns_(start_ns),
      last_arrival_ns_(std::numeric_limits<std::int64_t>::min()) {}

std::uint64_t Link::max_chunk_bytes() const {
  return bucket_ ? bucket_->burst_bytes() : kUnshapedChunkBytes;
}

// Uniform in [-jitter, +jitter]. Our own mapping from the raw 64-bit draws (rejection
// sampling), because std::uniform_int_distribution differs between standard libraries
// and a seed must give the same run everywhere.
std::int64_t Link::draw_jitter_ns() {
  if (jitter_ns_ == 0) return 0;
  const std::uint64_t span = 2 * static_cast<std::uint64_t>(jitter_ns_) + 1;
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t limit = max - max % span;  // a multiple of span: no modulo bias below it
  std::uint64_t draw = random_();
  while (draw >= limit) draw = random_();
  return static_cast<std::int64_t>(draw % span) - jitter_ns_;
}

Link::Slot Link::schedule(std::uint64_t bytes, std::int64_t now_ns) {
  Slot slot{};
  if (bucket_) {
    slot.departure_ns = bucket_->reserve(bytes, now_ns);
  } else {
    slot.departure_ns = std::max(now_ns, last_departure_ns_);
  }
  last_departure_ns_ = slot.departure_ns;
  // jitter <= delay, so the delay is never negative; holding a chunk behind the previous
  // one keeps FIFO order (netem would reorder instead, which MPI streams cannot take).
  slot.arrival_ns = std::max(slot.departure_ns + delay_ns_ + draw_jitter_ns(), last_arrival_ns_);
  last_arrival_ns_ = slot.arrival_ns;
  return slot;
}

}  // namespace cmlbed::net
