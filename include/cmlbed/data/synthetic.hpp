#pragma once
// A generated, learnable image data set for runs that need no files (tests, CI,
// scaling experiments). Each class has a fixed random prototype made of smooth
// blobs and a bar; a sample is its class prototype, shifted by a pixel or two,
// plus Gaussian noise, clipped to 0..255.
//
// Two seeds keep train and test sets consistent: `prototype_seed` fixes what
// each class looks like and must be shared by a train set and its test set;
// `seed` fixes the samples (labels, shifts, noise) and should differ between
// them. Output is deterministic for a given spec and does not change with the
// standard library: all random numbers come from std::mt19937_64 through our own
// arithmetic, never from the standard distributions, whose output is
// implementation-defined.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cmlbed/data/image_set.hpp"

namespace cmlbed::data {

struct SyntheticSpec {
  std::size_t samples = 0;
  std::int64_t channels = 1, height = 28, width = 28, num_classes = 10;
  std::uint64_t seed = 0;            // samples: labels, shifts and noise
  double noise = 0.35;               // noise standard deviation, as a fraction of full scale
  std::uint64_t prototype_seed = 0;  // what each class looks like
};

// Labels are balanced: each class occurs floor or ceil of samples/num_classes
// times, in shuffled order. Throws std::invalid_argument for zero samples or
// sizes, more than 256 classes, or a negative or non-finite noise.
ImageSet make_synthetic(const SyntheticSpec& spec);

// make_synthetic(spec).labels without the images (what partitioning needs; a simulation
// of 100,000 devices partitions millions of samples it never looks at). Same errors.
std::vector<std::uint8_t> synthetic_labels(const SyntheticSpec& spec);

}  // namespace cmlbed::data
