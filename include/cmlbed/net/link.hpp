#pragma once
// One emulated network link, as Linux tc would build it: a tbf token bucket shaper,
// then a netem-like one-way delay with optional jitter.
//
// The whole link is emulated at the sender: the transport cuts a message into chunks of
// at most max_chunk_bytes(), asks schedule() for each chunk's slot and releases the chunk
// onto MPI at its arrival time. Times are int64 nanoseconds on the caller's clock.
#include <cstdint>
#include <optional>
#include <random>

#include "cmlbed/net/rate_trace.hpp"
#include "cmlbed/net/token_bucket.hpp"

namespace cmlbed::net {

struct LinkSpec {
  // Shaping rate. With a trace, this is the rate before the trace's first point.
  // No rate and no trace: an unshaped link.
  std::optional<double> rate_bits_per_second;
  std::uint64_t burst_bytes = 65536;  // token bucket size
  std::int64_t delay_ns = 0;          // one-way delay after shaping
  std::int64_t jitter_ns = 0;         // delay varies uniformly in [delay - jitter, delay + jitter]
  std::optional<RateTrace> trace;
  std::uint64_t seed = 0;  // for the jitter
};

// Throws std::invalid_argument, saying why, for a spec the link cannot emulate: a zero
// burst, a negative delay or jitter, jitter above the delay, a rate out of range.
void validate_link_spec(const LinkSpec& spec);

// The rate `spec` has at `ns_since_start` (its trace's there, else its own; nullopt:
// unshaped).
std::optional<double> rate_at(const LinkSpec& spec, std::int64_t ns_since_start);
// The same link with that rate held from then on (no trace): what a planner that knows
// only the link's present rate, not its future, assumes (plan.replan).
LinkSpec held_at(const LinkSpec& spec, std::int64_t ns_since_start);

class Link {
 public:
  struct Slot {
    std::int64_t departure_ns;  // leaves the shaper
    std::int64_t arrival_ns;    // reaches the receiver: departure + delay + jitter
  };

  // Chunk size for an unshaped link: big enough to be cheap, small enough to interleave.
  static constexpr std::uint64_t kUnshapedChunkBytes = std::uint64_t{1} << 20;

  // Validates the spec (see validate_link_spec); the bucket starts full at start_ns.
  Link(const LinkSpec& spec, std::int64_t start_ns);

  // The slot for the next chunk of `bytes`, offered at now_ns. Chunks keep their order:
  // departures and arrivals never decrease, even if now_ns does.
  Slot schedule(std::uint64_t bytes, std::int64_t now_ns);

  // The largest chunk schedule() takes: the burst when shaped.
  std::uint64_t max_chunk_bytes() const;
  bool shaped() const { return bucket_.has_value(); }

 private:
  std::int64_t draw_jitter_ns();

  std::optional<TokenBucket> bucket_;
  std::int64_t delay_ns_;
  std::int64_t jitter_ns_;
  std::mt19937_64 random_;
  std::int64_t last_departure_ns_;
  std::int64_t last_arrival_ns_;
};

}  // namespace cmlbed::net
