// Rate trace files (`t_seconds,rate` lines): any content either gives a valid trace or
// throws std::invalid_argument naming the problem; a valid trace answers rate queries.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "cmlbed/net/rate_trace.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const cmlbed::fuzz::InputFile file("trace.csv", data, size);
  try {
    const cmlbed::net::RateTrace trace = cmlbed::net::parse_rate_trace_file(file.path());
    (void)trace.rate_at(0, 1e6);
    (void)trace.rate_at(trace.offsets_ns().back() + 1);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
