#pragma once
// Per-device values drawn from a distribution, for studies with many devices that differ
// (`cmlbed simulate --devices 1000`, or a real run): `devices.slowdown`, `devices.flops`
// and the link rates may be written as
//   uniform(LOW,HIGH)        every value in [LOW, HIGH] equally likely
//   lognormal(MEDIAN,SIGMA)  MEDIAN x exp(SIGMA x Z), Z standard normal (SIGMA unitless)
// with LOW, HIGH, MEDIAN in the option's own units (`uniform(5mbit,50mbit)`). Device K's
// value is a function of experiment.seed, the option's name and K only: every rank, the
// simulator and a resumed run draw the same value, and one device's draw does not
// depend on how many devices there are. Draws are clamped to the option's range.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace cmlbed {

struct Distribution {
  enum class Kind { uniform, lognormal };
  Kind kind = Kind::uniform;
  double first = 0, second = 0;  // uniform: low, high; lognormal: median, sigma
};

// nullopt when `text` is not of the form NAME(A,B); std::invalid_argument (saying why) for
// an unknown NAME, a bad argument (read by `parse_value`), LOW > HIGH, MEDIAN <= 0 or a
// SIGMA outside [0, 10].
std::optional<Distribution> parse_distribution(const std::string& text,
                                               const std::function<double(const std::string&)>& parse_value);

// Device `device`'s value of `option` (deterministic; see above).
double draw(const Distribution& distribution, std::uint64_t seed, const std::string& option, int device);

}  // namespace cmlbed
