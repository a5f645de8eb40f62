#include "cmlbed/config/distribution.hpp"

#include <cmath>
#include <stdexcept>

#include "cmlbed/base/parse_integer.hpp"
#include "cmlbed/base/seed_streams.hpp"

namespace cmlbed {
namespace {

// Uniform in [0, 1) from the top 53 bits.
double unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

}  // namespace

std::optional<Distribution> parse_distribution(const std::string& text,
                                               const std::function<double(const std::string&)>& parse_value) {
  const std::size_t open = text.find('(');
  if (open == std::string::npos || text.back() != ')') return std::nullopt;
  const std::string name = text.substr(0, open);
  const std::string inside = text.substr(open + 1, text.size() - open - 2);
  const std::size_t comma = inside.find(',');
  Distribution distribution;
  if (name == "uniform") {
    distribution.kind = Distribution::Kind::uniform;
  } else if (name == "lognormal") {
    distribution.kind = Distribution::Kind::lognormal;
  } else {
    throw std::invalid_argument("'" + text + "': unknown distribution '" + name +
                                "'; allowed: uniform(LOW,HIGH), lognormal(MEDIAN,SIGMA)");
  }
  if (comma == std::string::npos || inside.find(',', comma + 1) != std::string::npos) {
    throw std::invalid_argument("'" + text + "': " + name + " takes two arguments separated by one comma");
  }
  const std::string a = inside.substr(0, comma), b = inside.substr(comma + 1);
  distribution.first = parse_value(a);
  if (distribution.kind == Distribution::Kind::uniform) {
    distribution.second = parse_value(b);
    if (distribution.first > distribution.second) {
      throw std::invalid_argument("'" + text + "': LOW is above HIGH");
    }
  } else {
    const std::optional<double> sigma = parse_real(b);
    if (!sigma || *sigma < 0 || *sigma > 10) {
      throw std::invalid_argument("'" + text + "': SIGMA '" + b + "' must be a number in [0, 10]");
    }
    distribution.second = *sigma;
    if (!(distribution.first > 0)) throw std::invalid_argument("'" + text + "': MEDIAN must be above 0");
  }
  return distribution;
}

double draw(const Distribution& distribution, std::uint64_t seed, const std::string& option, int device) {
  const std::uint64_t stream = stream_seed(seed, option, {device});
  const double u1 = unit(splitmix64(stream)), u2 = unit(splitmix64(stream + 1));
  if (distribution.kind == Distribution::Kind::uniform) {
    return distribution.first + (distribution.second - distribution.first) * u1;
  }
  // Box-Muller: 1 - u1 is in (0, 1], safe to take the logarithm of.
  const double z = std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
  return distribution.first * std::exp(distribution.second * z);
}

}  // namespace cmlbed
