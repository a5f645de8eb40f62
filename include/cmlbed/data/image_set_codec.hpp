#pragma once
// An ImageSet as one byte string and back, so that the server can hand a device its
// share of a data set in one message: seven little-endian int64 (samples, channels,
// height, width, classes, pixel type, normalised channels: 0 or channels), then the
// normalisation's means and standard deviations (float32 each), then the labels, then
// the pixels.
#include <cstdint>
#include <vector>

#include "cmlbed/data/image_set.hpp"

namespace cmlbed::data {

std::vector<std::uint8_t> encode_image_set(const ImageSet& set);

// Throws DataError when `bytes` is not what encode_image_set makes: too short, sizes
// that disagree with its length, or a label >= classes.
ImageSet decode_image_set(const std::vector<std::uint8_t>& bytes);

}  // namespace cmlbed::data
