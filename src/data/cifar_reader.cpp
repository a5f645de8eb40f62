#include "cmlbed/data/cifar_reader.hpp"

#include <stdexcept>

#include "cmlbed/data/binary_file.hpp"
#include "cmlbed/data/data_error.hpp"

namespace cmlbed::data {
namespace {

// Far above the 30 MiB of a real batch; it only bounds what a gzip'd batch may
// decompress to.
constexpr std::uint64_t kMaxBatchBytes = std::uint64_t{1} << 32;

std::string size_problem(std::uint64_t size) {
  return "file size is " + std::to_string(size) + " bytes, expected a non-zero multiple of " +
         std::to_string(kCifarRecordBytes) +
         " (CIFAR-10 records of 1 label byte + 3x32x32 pixel bytes)";
}

void append_batch(const std::string& path, ImageSet& set) {
  BinaryFile file(path);
  // A raw file's size is checked before reading; a gzip'd one once inflated.
  if (file.raw_size() && (*file.raw_size() == 0 || *file.raw_size() % kCifarRecordBytes != 0)) {
    throw DataError(path, size_problem(*file.raw_size()));
  }
  const std::vector<std::uint8_t> bytes =
      file.raw_size() ? file.read_vector(*file.raw_size(), "CIFAR-10 records")
                      : file.read_to_end(kMaxBatchBytes, "CIFAR-10 records");
  if (bytes.empty() || bytes.size() % kCifarRecordBytes != 0) {
    throw DataError(path, size_problem(bytes.size()));
  }
  const std::size_t pixel_bytes = kCifarRecordBytes - 1;
  const std::size_t records = bytes.size() / kCifarRecordBytes;
  set.pixels.reserve(set.pixels.size() + records * pixel_bytes);
  set.labels.reserve(set.labels.size() + records);
  for (std::size_t r = 0; r < records; ++r) {
    const auto record = bytes.begin() + static_cast<std::ptrdiff_t>(r * kCifarRecordBytes);
    const std::uint8_t label = *record;
    if (label >= kCifarClasses) {
      throw DataError(path, "record " + std::to_string(r) + " has label " + std::to_string(label) +
                                ", expected 0.." + std::to_string(kCifarClasses - 1));
    }
    set.labels.push_back(label);
    set.pixels.insert(set.pixels.end(), record + 1,
                      record + static_cast<std::ptrdiff_t>(kCifarRecordBytes));
  }
}

}  // namespace

ImageSet read_cifar10(const std::vector<std::string>& batch_files) {
  if (batch_files.empty()) {
    throw std::invalid_argument("read_cifar10: no batch files given");
  }
  ImageSet set;
  set.channels = kCifarChannels;
  set.height = kCifarSide;
  set.width = kCifarSide;
  set.num_classes = kCifarClasses;
  for (const std::string& path : batch_files) {
    append_batch(path, set);
  }
  return set;
}

}  // namespace cmlbed::data
