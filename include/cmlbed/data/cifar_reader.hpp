#pragma once
// Reader for the CIFAR-10 binary version (data_batch_*.bin, test_batch.bin):
// records of one label byte followed by 3x32x32 pixel bytes, channel-major.

#include <cstdint>
#include <string>
#include <vector>

#include "cmlbed/data/image_set.hpp"

namespace cmlbed::data {

inline constexpr std::int64_t kCifarChannels = 3;
inline constexpr std::int64_t kCifarSide = 32;
inline constexpr std::int64_t kCifarClasses = 10;
inline constexpr std::uint64_t kCifarRecordBytes = 1 + 3 * 32 * 32;  // 3073

// Concatenates the records of `batch_files` in order. Throws DataError naming
// the file when one is missing, its size is not a non-zero multiple of 3073
// bytes, or a label is >= 10; std::invalid_argument when the list is empty.
ImageSet read_cifar10(const std::vector<std::string>& batch_files);

}  // namespace cmlbed::data
