// The emulated link on a virtual clock: tbf token bucket shaping (also from a rate
// trace), then delay and jitter, and the rate trace file format.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cmlbed/base/units.hpp"
#include "cmlbed/net/link.hpp"
#include "cmlbed/net/rate_trace.hpp"
#include "cmlbed/net/token_bucket.hpp"

namespace {

using cmlbed::parse_rate_bits_per_second;
using cmlbed::parse_size_bytes;
using cmlbed::net::Link;
using cmlbed::net::LinkSpec;
using cmlbed::net::parse_rate_trace_file;
using cmlbed::net::RateTrace;
using cmlbed::net::TokenBucket;

constexpr std::int64_t kMs = 1000000;
constexpr std::int64_t kSecond = 1000000000;
// 8000 bit/s is 1000 bytes/s: hand-computed departure times stay readable.
constexpr double kThousandBytesPerSecond = 8000;

// The message of the std::invalid_argument that `action` throws ("" if none).
template <typename Action>
std::string invalid_argument_message(Action action) {
  try {
    action();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

TEST(TokenBucket, FullBucketLetsBurstOutAtStart) {
  const std::uint64_t burst = parse_size_bytes("32kb");  // tc: 32 KiB
  ASSERT_EQ(burst, 32768u);
  TokenBucket bucket(parse_rate_bits_per_second("10mbit"), burst, 0);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(bucket.reserve(4096, 0), 0);
  // Empty now: the next 4096 bytes take 4096 * 8 / 10e6 s.
  EXPECT_EQ(bucket.reserve(4096, 0), 3276800);
}

TEST(TokenBucket, NothingLeavesBeforeTheStart) {
  TokenBucket bucket(kThousandBytesPerSecond, 1000, 5 * kSecond);
  EXPECT_EQ(bucket.reserve(1000, 0), 5 * kSecond);
  EXPECT_EQ(bucket.reserve(1000, 0), 6 * kSecond);
}

TEST(TokenBucket, LongStreamMatchesAnalyticTime) {
  const std::uint64_t burst = parse_size_bytes("32kb");
  const std::uint64_t total = parse_size_bytes("8mib");
  const double rate = parse_rate_bits_per_second("10mbit");
  TokenBucket bucket(rate, burst, 0);
  std::int64_t last = 0;
  for (std::uint64_t sent = 0; sent < total; sent += burst) last = bucket.reserve(burst, 0);
  const double analytic_ns = static_cast<double>(total - burst) * 8 / rate * 1e9;
  EXPECT_NEAR(static_cast<double>(last), analytic_ns, 1000.0);  // within 1 us
}

TEST(TokenBucket, NoDriftWhenChunksTakeFractionalNanoseconds) {
  // 1500 bytes at 7 mbit/s take 12e6/7 ns: every departure must be the exact analytic
  // time rounded up, however many chunks came before.
  TokenBucket bucket(7e6, 1500, 0);
  for (std::int64_t k = 0; k < 200000; ++k) {
    const std::int64_t exact_ceiling = (k * 12000000 + 6) / 7;
    ASSERT_EQ(bucket.reserve(1500, 0), exact_ceiling) << "chunk " << k;
  }
}

TEST(TokenBucket, GoodputMatchesRateOverTheLongRun) {
  const double rate = parse_rate_bits_per_second("10mbit");
  const std::uint64_t burst = parse_size_bytes("32kb");
  TokenBucket bucket(rate, burst, 0);
  const std::uint64_t chunk = 1500;
  std::uint64_t sent = 0;
  std::int64_t last = 0;
  std::int64_t now = 0;
  for (; sent < 100000000; sent += chunk) {
    last = bucket.reserve(chunk, now);
    now = last;  // a sender that always has the next chunk ready
  }
  // The full bucket's burst left at time 0; the rest came at the rate.
  const double goodput = static_cast<double>(sent - burst) * 8 / (static_cast<double>(last) / 1e9);
  EXPECT_NEAR(goodput, rate, rate * 0.001);
}

TEST(TokenBucket, NoDriftAcrossManyTraceRateChanges) {
  // The rate alternates between 3 and 7 mbit/s every 0.3 s for 60 s. A sender that is
  // always ready must finish when the integral of the rate reaches the bits after the burst.
  std::vector<cmlbed::net::RatePoint> points;
  for (int i = 0; i < 200; ++i) points.push_back({0.3 * i, i % 2 == 0 ? 3e6 : 7e6});
  const std::uint64_t burst = 1500;
  TokenBucket bucket(std::nullopt, RateTrace(points), burst, 0);
  const std::uint64_t chunks = 20000;  // 240 Mbit at an average 5 mbit/s: about 48 s
  std::int64_t last = 0;
  for (std::uint64_t k = 0; k < chunks; ++k) last = bucket.reserve(burst, 0);

  double bits_left = static_cast<double>((chunks - 1) * burst * 8);
  double analytic_s = 0;
  for (std::size_t i = 0; bits_left > 0; ++i) {
    const double step_bits = points[i].bits_per_second * 0.3;
    if (step_bits >= bits_left) {
      analytic_s = points[i].t_seconds + bits_left / points[i].bits_per_second;
    }
    bits_left -= step_bits;
  }
  EXPECT_NEAR(static_cast<double>(last), analytic_s * 1e9, 2.0);
}

TEST(TokenBucket, IdleTimeRefillsOnlyUpToTheBurst) {
  TokenBucket bucket(kThousandBytesPerSecond, 1000, 0);
  EXPECT_EQ(bucket.reserve(1000, 0), 0);
  // 100 s idle would be 100000 bytes of tokens, but the bucket holds 1000.
  EXPECT_EQ(bucket.reserve(1000, 100 * kSecond), 100 * kSecond);
  EXPECT_EQ(bucket.reserve(1000, 100 * kSecond), 101 * kSecond);
  // Partial refill: 200 bytes by 101.2 s, 500 bytes by 101.5 s.
  EXPECT_EQ(bucket.reserve(500, 101200 * kMs), 101500 * kMs);
}

TEST(TokenBucket, KeepsFifoOrderWhenNowGoesBackwards) {
  TokenBucket bucket(kThousandBytesPerSecond, 1000, 0);
  EXPECT_EQ(bucket.reserve(1000, 5 * kSecond), 5 * kSecond);
  EXPECT_EQ(bucket.reserve(100, 1 * kSecond), 5100 * kMs);
  EXPECT_EQ(bucket.reserve(100, 0), 5200 * kMs);
}

TEST(TokenBucket, RejectsChunksLargerThanTheBurst) {
  TokenBucket bucket(1e6, 1000, 0);
  EXPECT_NE(invalid_argument_message([&] { bucket.reserve(1001, 0); }).find("burst"),
            std::string::npos);
  EXPECT_EQ(bucket.reserve(1000, 0), 0);
}

TEST(TokenBucket, FollowsTraceRateChangeMidStream) {
  // 1000 bytes/s for 2 s, then 2000 bytes/s; the link starts at 10 s on the clock.
  const RateTrace trace({{0, 8000}, {2, 16000}});
  const std::int64_t start = 10 * kSecond;
  TokenBucket bucket(std::nullopt, trace, 1000, start);
  EXPECT_EQ(bucket.reserve(1000, start), start);                // the full bucket
  EXPECT_EQ(bucket.reserve(1000, start), start + 1 * kSecond);  // 1000 B at 1000 B/s
  EXPECT_EQ(bucket.reserve(500, start), start + 1500 * kMs);    // 500 B at 1000 B/s
  // 500 B by the boundary at 2 s, the other 500 B at 2000 B/s take 0.25 s.
  EXPECT_EQ(bucket.reserve(1000, start), start + 2250 * kMs);
  EXPECT_EQ(bucket.reserve(1000, start), start + 2750 * kMs);
}

TEST(TokenBucket, DepartureExactlyOnATraceBoundary) {
  const RateTrace trace({{0, 8000}, {2, 16000}});
  TokenBucket bucket(std::nullopt, trace, 1000, 0);
  EXPECT_EQ(bucket.reserve(1000, 0), 0);
  EXPECT_EQ(bucket.reserve(1000, 0), 1 * kSecond);
  EXPECT_EQ(bucket.reserve(1000, 0), 2 * kSecond);  // lands on the change
  EXPECT_EQ(bucket.reserve(1000, 0), 2500 * kMs);   // then 2000 B/s
}

TEST(TokenBucket, TraceStartsWithBaseRateBeforeItsFirstPoint) {
  const RateTrace trace({{1, 16000}});  // 2000 bytes/s from 1 s on
  TokenBucket bucket(kThousandBytesPerSecond, trace, 1000, 0);
  EXPECT_EQ(bucket.reserve(1000, 0), 0);
  EXPECT_EQ(bucket.reserve(500, 0), 500 * kMs);  // base rate: 1000 B/s
  // 500 B from 0.5 s to 1 s at the base rate, 500 B at 2000 B/s.
  EXPECT_EQ(bucket.reserve(1000, 0), 1250 * kMs);
}

TEST(TokenBucket, TraceWithoutBaseRateIsUnshapedUntilItsFirstPoint) {
  const RateTrace trace({{1, kThousandBytesPerSecond}});
  TokenBucket bucket(std::nullopt, trace, 1000, 0);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(bucket.reserve(1000, 0), 0);
  EXPECT_EQ(bucket.reserve(1000, 900 * kMs), 900 * kMs);
  // Shaping starts at 1 s with a full bucket.
  EXPECT_EQ(bucket.reserve(1000, 1 * kSecond), 1 * kSecond);
  EXPECT_EQ(bucket.reserve(1000, 1 * kSecond), 2 * kSecond);
}

TEST(RateTrace, RateAtUsesLastPointAndBaseBeforeTheFirst) {
  const RateTrace trace({{1, 10e6}, {30, 2e6}});
  EXPECT_EQ(trace.rate_at(0), std::nullopt);
  EXPECT_EQ(trace.rate_at(0, 5e6), 5e6);
  EXPECT_EQ(trace.rate_at(1 * kSecond), 10e6);
  EXPECT_EQ(trace.rate_at(30 * kSecond - 1), 10e6);
  EXPECT_EQ(trace.rate_at(30 * kSecond), 2e6);
  EXPECT_EQ(trace.rate_at(1000 * kSecond, 5e6), 2e6);
}

TEST(Link, HeldAtKeepsTheRateOfThatMomentAndDropsTheTrace) {
  cmlbed::net::LinkSpec spec;
  spec.rate_bits_per_second = 5e6;
  spec.burst_bytes = 4096;
  spec.delay_ns = 7;
  spec.trace = RateTrace({{1, 10e6}, {30, 2e6}});
  EXPECT_EQ(cmlbed::net::rate_at(spec, 0), 5e6);  // before the first point: the spec's own
  EXPECT_EQ(cmlbed::net::rate_at(spec, 31 * kSecond), 2e6);
  const cmlbed::net::LinkSpec held = cmlbed::net::held_at(spec, 2 * kSecond);
  EXPECT_EQ(held.rate_bits_per_second, 10e6);
  EXPECT_FALSE(held.trace.has_value());
  EXPECT_EQ(held.burst_bytes, 4096u);
  EXPECT_EQ(held.delay_ns, 7);
  cmlbed::net::LinkSpec unshaped;
  unshaped.trace = RateTrace({{1, 10e6}});
  EXPECT_EQ(cmlbed::net::held_at(unshaped, 0).rate_bits_per_second, std::nullopt);
  EXPECT_EQ(cmlbed::net::rate_at(spec, 0), cmlbed::net::rate_at(cmlbed::net::held_at(spec, 0), 100 * kSecond));
}

TEST(RateTrace, RejectsBadPoints) {
  const auto message = [](std::vector<cmlbed::net::RatePoint> points) {
    return invalid_argument_message([&] { RateTrace trace(points); });
  };
  EXPECT_NE(message({}).find("no points"), std::string::npos);
  EXPECT_NE(message({{-1, 1e6}}).find("point 1: time -1 s is negative"), std::string::npos);
  EXPECT_NE(message({{0, 1e6}, {0, 2e6}}).find("point 2"), std::string::npos);
  EXPECT_NE(message({{5, 1e6}, {3, 2e6}}).find("backwards"), std::string::npos);
  EXPECT_NE(message({{0, 0}}).find("positive"), std::string::npos);
}

TEST(Link, UnshapedLinkSendsAtOnceInOrder) {
  Link link(LinkSpec{}, 0);
  EXPECT_FALSE(link.shaped());
  EXPECT_EQ(link.max_chunk_bytes(), Link::kUnshapedChunkBytes);
  Link::Slot slot = link.schedule(1 << 20, 5 * kMs);
  EXPECT_EQ(slot.departure_ns, 5 * kMs);
  EXPECT_EQ(slot.arrival_ns, 5 * kMs);
  slot = link.schedule(100, 3 * kMs);  // FIFO even though now went back
  EXPECT_EQ(slot.departure_ns, 5 * kMs);
  EXPECT_EQ(slot.arrival_ns, 5 * kMs);
}

TEST(Link, MaxChunkIsTheBurstWhenShaped) {
  LinkSpec spec;
  spec.rate_bits_per_second = 1e6;
  spec.burst_bytes = 4000;
  Link link(spec, 0);
  EXPECT_TRUE(link.shaped());
  EXPECT_EQ(link.max_chunk_bytes(), 4000u);

  LinkSpec traced;
  traced.trace = RateTrace({{10, 1e6}});
  EXPECT_TRUE(Link(traced, 0).shaped());
  EXPECT_EQ(Link(traced, 0).max_chunk_bytes(), 65536u);  // the default burst
}

TEST(Link, DelayIsAddedAfterShaping) {
  LinkSpec spec;
  spec.rate_bits_per_second = kThousandBytesPerSecond;
  spec.burst_bytes = 1000;
  spec.delay_ns = 50 * kMs;
  Link link(spec, 0);
  Link::Slot slot = link.schedule(1000, 0);
  EXPECT_EQ(slot.departure_ns, 0);
  EXPECT_EQ(slot.arrival_ns, 50 * kMs);
  slot = link.schedule(1000, 0);
  EXPECT_EQ(slot.departure_ns, 1 * kSecond);
  EXPECT_EQ(slot.arrival_ns, 1050 * kMs);
}

std::vector<Link::Slot> jittered_slots(std::uint64_t seed, std::int64_t gap_ns, int count) {
  LinkSpec spec;
  spec.delay_ns = 10 * kMs;
  spec.jitter_ns = 5 * kMs;
  spec.seed = seed;
  Link link(spec, 0);
  std::vector<Link::Slot> slots;
  for (int i = 0; i < count; ++i) slots.push_back(link.schedule(1000, i * gap_ns));
  return slots;
}

TEST(Link, JitterStaysInBoundsAndKeepsFifo) {
  // Sends 1 ms apart with 10 ms of jitter range: FIFO must hold many chunks back.
  const std::vector<Link::Slot> slots = jittered_slots(42, 1 * kMs, 20000);
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const std::int64_t latency = slots[i].arrival_ns - slots[i].departure_ns;
    ASSERT_GE(latency, 5 * kMs) << "chunk " << i;
    ASSERT_LE(latency, 15 * kMs) << "chunk " << i;
    if (i > 0) {
      ASSERT_GE(slots[i].arrival_ns, slots[i - 1].arrival_ns) << "chunk " << i;
    }
  }
}

TEST(Link, JitterIsUniformAroundTheDelay) {
  // Sends 1 s apart are never held back, so the raw jitter shows.
  std::int64_t smallest = INT64_MAX, largest = 0;
  double sum = 0;
  for (const Link::Slot& slot : jittered_slots(7, 1 * kSecond, 20000)) {
    const std::int64_t latency = slot.arrival_ns - slot.departure_ns;
    smallest = std::min(smallest, latency);
    largest = std::max(largest, latency);
    sum += static_cast<double>(latency);
  }
  EXPECT_GE(smallest, 5 * kMs);
  EXPECT_LT(smallest, 5 * kMs + 10000);  // 20000 draws over 10 ms: gaps near 0.5 us
  EXPECT_LE(largest, 15 * kMs);
  EXPECT_GT(largest, 15 * kMs - 10000);
  EXPECT_NEAR(sum / 20000, 10.0 * kMs, 0.1 * kMs);  // sd of the mean about 0.02 ms
}

TEST(Link, JitterIsDeterministicBySeed) {
  const std::vector<Link::Slot> first = jittered_slots(42, 1 * kSecond, 1000);
  const std::vector<Link::Slot> again = jittered_slots(42, 1 * kSecond, 1000);
  const std::vector<Link::Slot> other = jittered_slots(43, 1 * kSecond, 1000);
  int same_as_other = 0;
  for (std::size_t i = 0; i < first.size(); ++i) {
    ASSERT_EQ(first[i].arrival_ns, again[i].arrival_ns) << "chunk " << i;
    same_as_other += first[i].arrival_ns == other[i].arrival_ns;
  }
  EXPECT_LT(same_as_other, 10);
}

TEST(Link, BytesPerSecondIsEightTimesFasterThanBits) {
  // tc's trap: mbps is megaBYTES per second.
  const auto time_to_send = [](const char* rate) {
    LinkSpec spec;
    spec.rate_bits_per_second = parse_rate_bits_per_second(rate);
    spec.burst_bytes = 1500;
    Link link(spec, 0);
    std::int64_t last = 0;
    for (int i = 0; i < 1000; ++i) last = link.schedule(1500, 0).departure_ns;
    return static_cast<double>(last);
  };
  EXPECT_DOUBLE_EQ(time_to_send("1mbit"), 999 * 1500 * 8 * 1e3);  // 12 ms a chunk
  EXPECT_DOUBLE_EQ(time_to_send("1mbit") / time_to_send("1mbps"), 8.0);
}

TEST(Link, RejectsInvalidSpecs) {
  const auto message = [](LinkSpec spec) {
    const std::string validated =
        invalid_argument_message([&] { cmlbed::net::validate_link_spec(spec); });
    EXPECT_EQ(validated, invalid_argument_message([&] { Link link(spec, 0); }));
    return validated;
  };
  LinkSpec spec;
  EXPECT_EQ(message(spec), "");

  spec.burst_bytes = 0;
  EXPECT_NE(message(spec).find("burst"), std::string::npos);
  spec = {};
  spec.delay_ns = -1;
  EXPECT_NE(message(spec).find("delay must not be negative"), std::string::npos);
  spec = {};
  spec.jitter_ns = -1;
  EXPECT_NE(message(spec).find("jitter must not be negative"), std::string::npos);
  spec = {};
  spec.delay_ns = 1 * kMs;
  spec.jitter_ns = 2 * kMs;
  EXPECT_NE(message(spec).find("must not exceed the delay"), std::string::npos);
  spec = {};
  spec.rate_bits_per_second = 0.5;
  EXPECT_NE(message(spec).find("outside the supported range"), std::string::npos);
  spec = {};
  spec.rate_bits_per_second = std::nan("");
  EXPECT_NE(message(spec).find("outside the supported range"), std::string::npos);
  spec = {};
  spec.trace = RateTrace({{0, 1e6}, {1, 1e16}});
  EXPECT_NE(message(spec).find("rate trace point 2"), std::string::npos);
}

class RateTraceFile : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& content) {
    const std::string path = ::testing::TempDir() + "cmlbed_rate_trace_" +
                             std::to_string(::getpid()) + "_" + name + ".csv";
    std::ofstream(path) << content;
    return path;
  }
};

TEST_F(RateTraceFile, ParsesCommentsHeaderBlankLinesAndUnits) {
  const std::string path = write("good",
                                 "# recorded uplink\n"
                                 "t_seconds,rate\n"
                                 "\n"
                                 "0,10mbit   # start\n"
                                 " 30 , 2mbit\r\n"
                                 "45.5,1mbps\n");
  const RateTrace trace = parse_rate_trace_file(path);
  ASSERT_EQ(trace.points().size(), 3u);
  EXPECT_EQ(trace.points()[0].t_seconds, 0);
  EXPECT_EQ(trace.points()[0].bits_per_second, 10e6);
  EXPECT_EQ(trace.points()[1].t_seconds, 30);
  EXPECT_EQ(trace.points()[1].bits_per_second, 2e6);
  EXPECT_EQ(trace.offsets_ns()[2], 45500 * kMs);
  EXPECT_EQ(trace.points()[2].bits_per_second, 8e6);  // mbps: BYTES per second
}

TEST_F(RateTraceFile, RejectsBadFilesNamingFileAndLine) {
  struct Case {
    const char* name;
    const char* content;
    const char* expected;
  };
  const Case cases[] = {
      {"bad_number", "0,10mbit\nabc,2mbit\n", "line 2: time 'abc' is not a number of seconds"},
      {"bad_unit", "0,10mbits\n", "line 1: '10mbits' is not a valid rate"},
      {"zero_rate", "0,0mbit\n", "line 1: '0mbit' is not a valid rate (must be positive"},
      {"backwards", "# c\n0,1mbit\n30,2mbit\n20,3mbit\n",
       "line 4: time 20 s after 30 s goes backwards"},
      {"repeated", "0,1mbit\n0,2mbit\n", "line 2: time 0 s after 0 s repeats a time"},
      {"negative", "-1,1mbit\n", "line 1: time -1 s is negative"},
      {"fields", "0,1mbit,3\n", "line 1: expected 't_seconds,rate'"},
      {"no_comma", "0 1mbit\n", "line 1: expected 't_seconds,rate'"},
      {"late_header", "0,1mbit\nt_seconds,rate\n", "line 2: time 't_seconds'"},
      {"infinite", "inf,1mbit\n", "line 1: time 'inf' is not a number"},
      {"empty", "# nothing here\n\nt_seconds,rate\n", ": no points"},
  };
  for (const Case& c : cases) {
    const std::string path = write(c.name, c.content);
    const std::string message = invalid_argument_message([&] { parse_rate_trace_file(path); });
    EXPECT_NE(message.find("rate trace '" + path + "'"), std::string::npos)
        << c.name << ": " << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.name << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << c.name;
  }
  const std::string missing = ::testing::TempDir() + "cmlbed_no_such_trace.csv";
  EXPECT_NE(invalid_argument_message([&] {
              parse_rate_trace_file(missing);
            }).find("rate trace '" + missing + "': cannot open (No such file or directory)"),
            std::string::npos);
}

// Found reading the trace parser for the configuration's fuzzing: a trace path naming
// something without end (/dev/zero) read one endless line into memory (2 GiB and 20 s
// under `ulimit -v 4000000`, unbounded without it). Now at most 16 MiB is read.
TEST_F(RateTraceFile, RefusesFilesLargerThanATraceMayBe) {
  EXPECT_NE(invalid_argument_message([] { parse_rate_trace_file("/dev/zero"); })
                .find("rate trace '/dev/zero': larger than a trace may be (at most 16 MiB)"),
            std::string::npos);
  std::string big = "0,10mbit\n";
  while (big.size() <= (std::size_t{16} << 20)) big += "# padding padding padding padding\n";
  const std::string path = write("big.csv", big);
  EXPECT_NE(invalid_argument_message([&] { parse_rate_trace_file(path); })
                .find("larger than a trace may be"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] { parse_rate_trace_file("/"); }).find("read error"),
            std::string::npos);
}

}  // namespace
