#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace cmlbed {

// Shape of one input sample, channels x height x width.
struct ImageShape {
  std::int64_t channels = 1;
  std::int64_t height = 28;
  std::int64_t width = 28;

  std::int64_t elements() const { return channels * height * width; }
  std::string to_string() const;  // "3x32x32"
  bool operator==(const ImageShape& other) const {
    return channels == other.channels && height == other.height && width == other.width;
  }
};

// Parses "CxHxW" (each 1..4096); throws std::invalid_argument with the allowed form.
ImageShape parse_image_shape(std::string_view text);

}  // namespace cmlbed
