#pragma once
// An in-memory labelled image data set, independent of any tensor library so that
// the readers compile quickly and can be tested without LibTorch.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace cmlbed::data {

struct ImageSet {
  std::int64_t channels = 0, height = 0, width = 0;
  std::int64_t num_classes = 0;
  // N*C*H*W bytes: sample-major, and channel-height-width within a sample, which
  // is the layout a [N, C, H, W] tensor expects.
  std::vector<std::uint8_t> pixels;
  std::vector<std::uint8_t> labels;  // N entries, each < num_classes

  std::size_t size() const { return labels.size(); }

  std::size_t sample_bytes() const {
    return static_cast<std::size_t>(channels) * static_cast<std::size_t>(height) *
           static_cast<std::size_t>(width);
  }

  // The samples at `indices`, in that order (repeats allowed). Used to hand each
  // device its partition. Throws std::out_of_range for an index >= size().
  ImageSet subset(const std::vector<std::size_t>& indices) const {
    ImageSet out;
    out.channels = channels;
    out.height = height;
    out.width = width;
    out.num_classes = num_classes;
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
