#pragma once
// An in-memory labelled image data set, independent of any tensor library so that
// the readers compile quickly and can be tested without LibTorch.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace cmlbed::data {

// How a pixel is stored: a byte (0..255, scaled by 1/255 when trained on) or a float32
// taken as is (data.dataset = arrays).
enum class PixelType : std::uint8_t { uint8 = 0, float32 = 1 };

inline std::size_t pixel_bytes(PixelType type) { return type == PixelType::float32 ? 4 : 1; }

struct ImageSet {
  std::int64_t channels = 0, height = 0, width = 0;
  std::int64_t num_classes = 0;
  PixelType pixel_type = PixelType::uint8;
  // N*C*H*W pixels of pixel_type, as bytes (float32 in this machine's order):
  // sample-major, and channel-height-width within a sample, which is the layout a
  // [N, C, H, W] tensor expects.
  std::vector<std::uint8_t> pixels;
  std::vector<std::uint8_t> labels;  // N entries, each < num_classes
  // Per-channel normalisation when a batch becomes a tensor, after uint8 pixels are
  // scaled to 0..1: (x - channel_mean[c]) / channel_std[c]. Both empty: none.
  std::vector<float> channel_mean, channel_std;

  std::size_t size() const { return labels.size(); }

  std::size_t sample_bytes() const {
    return static_cast<std::size_t>(channels) * static_cast<std::size_t>(height) *
           static_cast<std::size_t>(width) * pixel_bytes(pixel_type);
  }

  // The samples at `indices`, in that order (repeats allowed). Used to hand each
  // device its partition. Throws std::out_of_range for an index >= size().
  ImageSet subset(const std::vector<std::size_t>& indices) const {
    ImageSet out;
    out.channels = channels;
    out.height = height;
    out.width = width;
    out.num_classes = num_classes;
    out.pixel_type = pixel_type;
    out.channel_mean = channel_mean;
    out.channel_std = channel_std;
    const std::size_t bytes = sample_bytes();
    out.pixels.reserve(indices.size() * bytes);
    out.labels.reserve(indices.size());
    for (const std::size_t index : indices) {
      if (index >= size()) {
        throw std::out_of_range("ImageSet::subset: index " + std::to_string(index) +
                                " is out of range for a set of " + std::to_string(size()) +
                                " samples");
      }
      const auto first = pixels.begin() + static_cast<std::ptrdiff_t>(index * bytes);
      out.pixels.insert(out.pixels.end(), first, first + static_cast<std::ptrdiff_t>(bytes));
      out.labels.push_back(labels[index]);
    }
    return out;
  }
};

}  // namespace cmlbed::data
