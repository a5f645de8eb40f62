// tc-style rates, sizes and durations, and compute rates: any text either parses or throws
// std::invalid_argument, and what parses formats and parses back.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "cmlbed/base/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    cmlbed::format_rate(cmlbed::parse_rate_bits_per_second(text));
  } catch (const std::invalid_argument&) {
  }
  try {
    cmlbed::format_size(cmlbed::parse_size_bytes(text));
  } catch (const std::invalid_argument&) {
  }
  try {
    cmlbed::format_duration(cmlbed::parse_duration_ns(text));
  } catch (const std::invalid_argument&) {
  }
  try {
    cmlbed::format_compute_rate(cmlbed::parse_compute_rate_flops(text));
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
