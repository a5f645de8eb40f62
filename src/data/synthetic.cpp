#include "cmlbed/data/synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

#include "portable_random.hpp"

namespace cmlbed::data {
namespace {

using random::kPi;
using random::NormalSource;
using random::shuffle;
using random::splitmix64;
using random::uniform;
using random::uniform_below;

// One class's appearance, intensities in 0..1, channel-height-width.
using Prototype = std::vector<double>;

// A few Gaussian blobs and one soft bar: smooth, so a shift of a pixel or two
// changes a sample only a little, and random enough that classes differ.
std::vector<double> make_shape(std::mt19937_64& rng, std::int64_t height, std::int64_t width) {
  const double side = static_cast<double>(std::min(height, width));
  const auto h = static_cast<double>(height);
  const auto w = static_cast<double>(width);
  std::vector<double> shape(static_cast<std::size_t>(height * width), 0.0);
  auto at = [&](std::int64_t y, std::int64_t x) -> double& {
    return shape[static_cast<std::size_t>(y * width + x)];
  };

  constexpr int kBlobs = 3;
  for (int b = 0; b < kBlobs; ++b) {
    const double cy = uniform(rng, 0.15, 0.85) * h;
    const double cx = uniform(rng, 0.15, 0.85) * w;
    const double sigma = std::max(0.7, uniform(rng, 0.06, 0.16) * side);
    const double amplitude = uniform(rng, 0.6, 1.0);
    for (std::int64_t y = 0; y < height; ++y) {
      for (std::int64_t x = 0; x < width; ++x) {
        const double dy = static_cast<double>(y) - cy;
        const double dx = static_cast<double>(x) - cx;
        at(y, x) += amplitude * std::exp(-(dy * dy + dx * dx) / (2.0 * sigma * sigma));
      }
    }
  }

  const double cy = uniform(rng, 0.3, 0.7) * h;
  const double cx = uniform(rng, 0.3, 0.7) * w;
  const double angle = uniform(rng, 0.0, kPi);
  const double half_length = uniform(rng, 0.25, 0.45) * side;
  const double half_width = std::max(0.6, 0.05 * side);
  const double amplitude = uniform(rng, 0.6, 1.0);
  for (std::int64_t y = 0; y < height; ++y) {
    for (std::int64_t x = 0; x < width; ++x) {
      const double dy = static_cast<double>(y) - cy;
      const double dx = static_cast<double>(x) - cx;
      const double along = dx * std::cos(angle) + dy * std::sin(angle);
      const double across = -dx * std::sin(angle) + dy * std::cos(angle);
      const double beyond_end = std::max(0.0, std::abs(along) - half_length);
      const double distance2 = across * across + beyond_end * beyond_end;
      at(y, x) += amplitude * std::exp(-distance2 / (2.0 * half_width * half_width));
    }
  }

  for (double& value : shape) {
    value = std::min(1.0, value);
  }
  return shape;
}

std::vector<Prototype> make_prototypes(const SyntheticSpec& spec) {
  std::mt19937_64 rng(splitmix64(spec.prototype_seed ^ 0x70726f746f747970ULL));
  const auto plane = static_cast<std::size_t>(spec.height * spec.width);
  std::vector<Prototype> prototypes;
  prototypes.reserve(static_cast<std::size_t>(spec.num_classes));
  for (std::int64_t c = 0; c < spec.num_classes; ++c) {
    const std::vector<double> shape = make_shape(rng, spec.height, spec.width);
    Prototype prototype;
    prototype.reserve(plane * static_cast<std::size_t>(spec.channels));
    for (std::int64_t ch = 0; ch < spec.channels; ++ch) {
      // A per-class colour: grey images use the shape as is.
      const double weight = spec.channels == 1 ? 1.0 : uniform(rng, 0.3, 1.0);
      for (const double value : shape) {
        prototype.push_back(weight * value);
      }
    }
    prototypes.push_back(std::move(prototype));
  }
  return prototypes;
}

void validate(const SyntheticSpec& spec) {
  auto fail = [](const std::string& problem) {
    throw std::invalid_argument("synthetic data set: " + problem);
  };
  if (spec.samples == 0) fail("samples is 0, expected at least 1");
  if (spec.channels < 1 || spec.height < 1 || spec.width < 1) {
    fail("image size is " + std::to_string(spec.channels) + "x" + std::to_string(spec.height) +
         "x" + std::to_string(spec.width) + ", expected every dimension >= 1");
  }
  if (spec.channels > 64 || spec.height > 4096 || spec.width > 4096) {
    fail("image size " + std::to_string(spec.channels) + "x" + std::to_string(spec.height) + "x" +
         std::to_string(spec.width) + " is too large (at most 64x4096x4096)");
  }
  if (spec.num_classes < 1 || spec.num_classes > 256) {
    fail("num_classes is " + std::to_string(spec.num_classes) + ", expected 1..256");
  }
  if (!std::isfinite(spec.noise) || spec.noise < 0.0) {
    fail("noise is " + std::to_string(spec.noise) + ", expected a finite value >= 0");
  }
}

// i % classes for balance, then a Fisher-Yates shuffle so classes interleave.
std::vector<std::uint8_t> balanced_labels(std::mt19937_64& rng, std::size_t samples,
                                          std::int64_t num_classes) {
  std::vector<std::uint8_t> labels(samples);
  for (std::size_t i = 0; i < samples; ++i) {
    labels[i] = static_cast<std::uint8_t>(i % static_cast<std::size_t>(num_classes));
  }
  shuffle(rng, labels);
  return labels;
}

// The samples' stream: their labels first, then each one's shift and noise.
std::mt19937_64 sample_random(const SyntheticSpec& spec) {
  return std::mt19937_64(splitmix64(spec.seed ^ 0x73616d706c657321ULL));
}

}  // namespace

std::vector<std::uint8_t> synthetic_labels(const SyntheticSpec& spec) {
  validate(spec);
  std::mt19937_64 rng = sample_random(spec);
  return balanced_labels(rng, spec.samples, spec.num_classes);
}

ImageSet make_synthetic(const SyntheticSpec& spec) {
  validate(spec);
  const std::vector<Prototype> prototypes = make_prototypes(spec);
  std::mt19937_64 rng = sample_random(spec);
  NormalSource normal(rng);

  ImageSet set;
  set.channels = spec.channels;
  set.height = spec.height;
  set.width = spec.width;
  set.num_classes = spec.num_classes;
  set.labels = balanced_labels(rng, spec.samples, spec.num_classes);
  set.pixels.resize(spec.samples * set.sample_bytes());

  // Shifts of up to about a tenth of the image side make position a nuisance a
  // model must tolerate, not a feature it can memorise.
  const std::int64_t max_shift = std::max<std::int64_t>(1, std::min(spec.height, spec.width) / 10);
  std::uint8_t* out = set.pixels.data();
  for (std::size_t i = 0; i < spec.samples; ++i) {
    const Prototype& prototype = prototypes[set.labels[i]];
    const auto dy = static_cast<std::int64_t>(uniform_below(rng, 2 * max_shift + 1)) - max_shift;
    const auto dx = static_cast<std::int64_t>(uniform_below(rng, 2 * max_shift + 1)) - max_shift;
    for (std::int64_t ch = 0; ch < spec.channels; ++ch) {
      for (std::int64_t y = 0; y < spec.height; ++y) {
        for (std::int64_t x = 0; x < spec.width; ++x) {
          const std::int64_t sy = y - dy;
          const std::int64_t sx = x - dx;
          const bool inside = sy >= 0 && sy < spec.height && sx >= 0 && sx < spec.width;
          const double clean =
              inside
                  ? prototype[static_cast<std::size_t>((ch * spec.height + sy) * spec.width + sx)]
                  : 0.0;
          const double value = std::clamp(clean + spec.noise * normal.next(), 0.0, 1.0);
          *out++ = static_cast<std::uint8_t>(std::lround(value * 255.0));
        }
      }
    }
  }
  return set;
}

}  // namespace cmlbed::data
