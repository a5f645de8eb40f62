#pragma once
// Parsing of tc-style quantities: rates, sizes and durations.
//
// The words follow Linux tc (tc(8), "PARAMETERS"), because researchers copy link
// settings from tc commands. Beware tc's classic trap: `bit`/`kbit`/`mbit` are bits
// per second, but `bps`/`kbps`/`mbps` are BYTES per second.
#include <cstdint>
#include <string>
#include <string_view>

namespace cmlbed {

// A rate in bits per second.
//   bit kbit mbit gbit tbit      SI bits/s (1 kbit = 1000 bit/s); a bare number is bit/s
//   kibit mibit gibit tibit      IEC bits/s (1 kibit = 1024 bit/s)
//   bps kbps mbps gbps tbps      SI BYTES/s (1 mbps = 8,000,000 bit/s)
//   kibps mibps gibps tibps      IEC BYTES/s
// Throws std::invalid_argument naming the text and the allowed units.
double parse_rate_bits_per_second(std::string_view text);

// A size in bytes.
//   b or a bare number           bytes
//   k kb kib, m mb mib, g gb gib binary multiples of bytes (tc: 1 kb = 1024 bytes)
//   kbit mbit gbit               binary multiples of bits (tc: 1 kbit = 128 bytes)
// Fractions must come out as whole bytes.
std::uint64_t parse_size_bytes(std::string_view text);

// A duration in nanoseconds: a number followed by s/sec/secs, ms/msec/msecs,
// us/usec/usecs or ns. Unlike tc (which reads a bare number as microseconds), a unit is
// required: a bare "10" is too easy to misread.
std::int64_t parse_duration_ns(std::string_view text);

// A compute rate in floating-point operations per second (devices.flops): a number
// followed by flop/s, kflop/s, mflop/s, gflop/s or tflop/s (SI, any case: "2GFLOP/s").
// A unit is required; the rate must be positive.
double parse_compute_rate_flops(std::string_view text);

// Human-readable forms for plans and summaries ("10 mbit/s", "64 KiB", "2.5 ms").
std::string format_rate(double bits_per_second);
std::string format_size(std::uint64_t bytes);
std::string format_duration(std::int64_t nanoseconds);
std::string format_compute_rate(double flops_per_second);

}  // namespace cmlbed
