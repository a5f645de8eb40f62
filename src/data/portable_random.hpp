#pragma once
// Portable random numbers for the data module (internal; not installed).
//
// The standard distributions (std::uniform_real_distribution,
// std::normal_distribution, std::shuffle, ...) have implementation-defined
// output: the same engine and seed give different numbers with libstdc++, libc++
// and MSVC. Synthetic data sets and partitions must be identical everywhere for
// a given seed, so every draw here is our own arithmetic on the raw output of
// std::mt19937_64, whose sequence the standard does fix.
//
// Changing any function here changes the output of make_synthetic and
// partition_indices for existing seeds; keep them bit-for-bit stable.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "cmlbed/base/seed_streams.hpp"

namespace cmlbed::data::random {

inline constexpr double kPi = 3.14159265358979323846;

// Derives independent generator seeds from one user seed, so that related seeds
// (equal, or differing in a bit) do not give correlated streams.
using ::cmlbed::splitmix64;

// Uniform in [0, 1) from the top 53 bits.
inline double uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// Uniform in (0, 1], safe to take the logarithm of.
inline double uniform_open_zero(std::mt19937_64& rng) { return 1.0 - uniform01(rng); }

// Uniform in [low, high).
inline double uniform(std::mt19937_64& rng, double low, double high) {
  return low + (high - low) * uniform01(rng);
}

// Uniform in [0, n) without modulo bias; n must be positive.
inline std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n) {
  const std::uint64_t limit = std::mt19937_64::max() - std::mt19937_64::max() % n;
  std::uint64_t draw = rng();
  while (draw >= limit) {
    draw = rng();
  }
  return draw % n;
}

// Box-Muller from two uniforms: radius first, then angle. A standard normal
// pair is (radius * cos(angle), radius * sin(angle)).
struct BoxMuller {
  double radius;
  double angle;
};

inline BoxMuller box_muller(std::mt19937_64& rng) {
  const double radius = std::sqrt(-2.0 * std::log(uniform_open_zero(rng)));
  const double angle = 2.0 * kPi * uniform01(rng);
  return {radius, angle};
}

// One standard normal per two uniforms; the sine half of the pair is dropped.
// Consumes the generator differently from NormalSource, so the two are not
// interchangeable without changing output.
inline double standard_normal(std::mt19937_64& rng) {
  const BoxMuller pair = box_muller(rng);
  return pair.radius * std::cos(pair.angle);
}

// Standard normals by Box-Muller, both halves used: the sine half of each pair
// is kept for the next call.
class NormalSource {
 public:
  explicit NormalSource(std::mt19937_64& rng) : rng_(rng) {}

  double next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const BoxMuller pair = box_muller(rng_);
    spare_ = pair.radius * std::sin(pair.angle);
    has_spare_ = true;
    return pair.radius * std::cos(pair.angle);
  }

 private:
  std::mt19937_64& rng_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

// Fisher-Yates, from the back.
template <typename T>
void shuffle(std::mt19937_64& rng, std::vector<T>& items) {
  for (std::size_t i = items.size(); i > 1; --i) {
    std::swap(items[i - 1], items[uniform_below(rng, i)]);
  }
}

}  // namespace cmlbed::data::random
