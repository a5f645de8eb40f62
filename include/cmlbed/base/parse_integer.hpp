#pragma once
// Whole-string integer parsing for options: "12" yes; "12x", "", "1e3" no.
#include <exception>
#include <optional>
#include <string>

namespace cmlbed {

inline std::optional<long long> parse_integer(const std::string& text) {
  std::size_t used = 0;
  long long number = 0;
  try {
    number = std::stoll(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used == 0 || used != text.size()) return std::nullopt;
  return number;
}

}  // namespace cmlbed
