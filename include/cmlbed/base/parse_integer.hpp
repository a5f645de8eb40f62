#pragma once
// Whole-string number parsing for options: parse_integer("12") yes; "12x", "", "1e3"
// no. parse_real: a finite number, the whole string ("1e3" yes; "inf", "1x" no).
#include <cmath>
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

inline std::optional<double> parse_real(const std::string& text) {
  std::size_t used = 0;
  double number = 0;
  try {
    number = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used == 0 || used != text.size() || !std::isfinite(number)) return std::nullopt;
  return number;
}

}  // namespace cmlbed
