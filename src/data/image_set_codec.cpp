#include "cmlbed/data/image_set_codec.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "cmlbed/data/data_error.hpp"

namespace cmlbed::data {
namespace {

constexpr std::size_t kHeaderValues = 7;
constexpr std::size_t kHeaderBytes = kHeaderValues * 8;

void put_int64(std::vector<std::uint8_t>& out, std::int64_t value) {
  const auto bits = static_cast<std::uint64_t>(value);
  for (int byte = 0; byte < 8; ++byte) out.push_back(static_cast<std::uint8_t>(bits >> (8 * byte)));
}

std::int64_t get_int64(const std::uint8_t* in) {
  std::uint64_t bits = 0;
  for (int byte = 0; byte < 8; ++byte) bits |= std::uint64_t{in[byte]} << (8 * byte);
  return static_cast<std::int64_t>(bits);
}

void put_float(std::vector<std::uint8_t>& out, float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, 4);
  for (int byte = 0; byte < 4; ++byte) out.push_back(static_cast<std::uint8_t>(bits >> (8 * byte)));
}

float get_float(const std::uint8_t* in) {
  std::uint32_t bits = 0;
  for (int byte = 0; byte < 4; ++byte) bits |= std::uint32_t{in[byte]} << (8 * byte);
  float value = 0;
  std::memcpy(&value, &bits, 4);
  return value;
}

[[noreturn]] void malformed(const std::string& problem) {
  throw DataError("encoded image set", problem);
}

}  // namespace

std::vector<std::uint8_t> encode_image_set(const ImageSet& set) {
  std::vector<std::uint8_t> out;
  const std::size_t normalised = set.channel_mean.size();
  out.reserve(kHeaderBytes + 8 * normalised + set.labels.size() + set.pixels.size());
  for (const std::int64_t value : {static_cast<std::int64_t>(set.size()), set.channels, set.height,
                                   set.width, set.num_classes, static_cast<std::int64_t>(set.pixel_type),
                                   static_cast<std::int64_t>(normalised)}) {
    put_int64(out, value);
  }
  for (const std::vector<float>* values : {&set.channel_mean, &set.channel_std}) {
    for (const float value : *values) put_float(out, value);
  }
  out.insert(out.end(), set.labels.begin(), set.labels.end());
  out.insert(out.end(), set.pixels.begin(), set.pixels.end());
  return out;
}

ImageSet decode_image_set(const std::vector<std::uint8_t>& bytes) {
  if (bytes.size() < kHeaderBytes) {
    malformed(std::to_string(bytes.size()) + " bytes, shorter than its " + std::to_string(kHeaderBytes) +
              "-byte header");
  }
  std::array<std::int64_t, kHeaderValues> header{};
  for (std::size_t i = 0; i < kHeaderValues; ++i) header[i] = get_int64(bytes.data() + 8 * i);
  const auto [samples, channels, height, width, classes, pixel_type, normalised] = header;
  // Each bound keeps the products below from overflowing before they are compared.
  constexpr std::int64_t kMaxSide = 1 << 20;
  if (samples < 0 || samples > (std::int64_t{1} << 40) || channels < 0 || channels > kMaxSide ||
      height < 0 || height > kMaxSide || width < 0 || width > kMaxSide || classes < 1 || classes > 256 ||
      (pixel_type != 0 && pixel_type != 1) || (normalised != 0 && normalised != channels)) {
    malformed("impossible header: " + std::to_string(samples) + " samples of " + std::to_string(channels) +
              "x" + std::to_string(height) + "x" + std::to_string(width) + ", " + std::to_string(classes) +
              " classes, pixel type " + std::to_string(pixel_type) + ", " + std::to_string(normalised) +
              " normalised channels");
  }
  const auto type = static_cast<PixelType>(pixel_type);
  const std::uint64_t norm_bytes = 8 * static_cast<std::uint64_t>(normalised);
  // Below 2^60 by the bounds above; compared per sample so that nothing overflows.
  const auto sample_bytes = static_cast<std::uint64_t>(channels) * static_cast<std::uint64_t>(height) *
                            static_cast<std::uint64_t>(width) * pixel_bytes(type);
  const std::uint64_t after_header = bytes.size() - kHeaderBytes;
  const std::uint64_t payload = after_header - std::min(after_header, norm_bytes);
  const auto count = static_cast<std::uint64_t>(samples);
  const bool fits = after_header >= norm_bytes &&
                    (count == 0 ? payload == 0 : payload % count == 0 && payload / count == 1 + sample_bytes);
  if (!fits) {
    malformed(std::to_string(bytes.size()) + " bytes, but its header (" + std::to_string(samples) +
              " samples of " + std::to_string(channels) + "x" + std::to_string(height) + "x" +
              std::to_string(width) + ") implies another length");
  }
  ImageSet set;
  set.channels = channels;
  set.height = height;
  set.width = width;
  set.num_classes = classes;
  set.pixel_type = type;
  for (std::int64_t c = 0; c < normalised; ++c) {
    set.channel_mean.push_back(get_float(bytes.data() + kHeaderBytes + 4 * c));
    set.channel_std.push_back(get_float(bytes.data() + kHeaderBytes + 4 * (normalised + c)));
  }
  const auto labels_begin = bytes.begin() + static_cast<std::ptrdiff_t>(kHeaderBytes + norm_bytes);
  const auto pixels_begin = labels_begin + static_cast<std::ptrdiff_t>(samples);
  set.labels.assign(labels_begin, pixels_begin);
  set.pixels.assign(pixels_begin, bytes.end());
  for (std::size_t i = 0; i < set.labels.size(); ++i) {
    if (set.labels[i] >= classes) {
      malformed("label " + std::to_string(i) + " is " + std::to_string(set.labels[i]) + ", expected 0.." +
                std::to_string(classes - 1));
    }
  }
  return set;
}

}  // namespace cmlbed::data
