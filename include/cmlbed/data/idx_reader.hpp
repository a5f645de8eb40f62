#pragma once
// Reader for the IDX format of MNIST and Fashion-MNIST (raw or gzip):
// big-endian 32-bit magic, then the dimension sizes, then unsigned bytes.

#include <cstdint>
#include <string>

#include "cmlbed/data/image_set.hpp"

namespace cmlbed::data {

// Magic numbers: 0x08 = unsigned byte, low byte = number of dimensions.
inline constexpr std::uint32_t kIdxImagesMagic = 0x00000803;
inline constexpr std::uint32_t kIdxLabelsMagic = 0x00000801;

// Header values beyond these are treated as corrupt rather than trusted; they are
// far above any real IDX data set (MNIST has 60000 images of 28x28).
inline constexpr std::uint32_t kIdxMaxCount = 100'000'000;
inline constexpr std::uint32_t kIdxMaxSide = 4096;
inline constexpr std::uint64_t kIdxMaxPayloadBytes = std::uint64_t{4} << 30;  // 4 GiB

// Reads an images file and its labels file into an ImageSet with channels = 1.
// Throws DataError naming the offending file for: a missing or unreadable file,
// a wrong magic, zero or absurd header sizes, a raw file whose size differs from
// what its header implies, a truncated stream, trailing data, differing image
// and label counts, or a label >= num_classes. Throws std::invalid_argument for
// num_classes outside 1..256.
ImageSet read_idx(const std::string& images_path, const std::string& labels_path,
                  std::int64_t num_classes = 10);

}  // namespace cmlbed::data
