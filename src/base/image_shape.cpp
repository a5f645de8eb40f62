#include "cmlbed/base/image_shape.hpp"

#include <stdexcept>
#include <string>

namespace cmlbed {

std::string ImageShape::to_string() const {
  return std::to_string(channels) + "x" + std::to_string(height) + "x" + std::to_string(width);
}

ImageShape parse_image_shape(std::string_view text) {
  std::int64_t parts[3] = {0, 0, 0};
  std::size_t part = 0;
  bool has_digit = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      parts[part] = parts[part] * 10 + (c - '0');
      has_digit = true;
      if (parts[part] > 4096) part = 99;
    } else if ((c == 'x' || c == 'X') && has_digit && part < 2) {
      ++part;
      has_digit = false;
    } else {
      part = 99;
    }
    if (part > 2) break;
  }
  if (part != 2 || !has_digit || parts[0] < 1 || parts[1] < 1 || parts[2] < 1) {
    throw std::invalid_argument("'" + std::string(text) +
                                "' is not an image shape; allowed: CxHxW with each of C, H, W "
                                "in 1..4096, e.g. 3x32x32");
  }
  return ImageShape{parts[0], parts[1], parts[2]};
}

}  // namespace cmlbed
