#include "cmlbed/data/idx_reader.hpp"

#include <array>
#include <cstdio>
#include <stdexcept>

#include "cmlbed/data/binary_file.hpp"
#include "cmlbed/data/data_error.hpp"

namespace cmlbed::data {
namespace {

std::string hex32(std::uint32_t value) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08x", static_cast<unsigned>(value));
  return text;
}

std::uint32_t read_big_endian_u32(BinaryFile& file, const char* what) {
  std::array<unsigned char, 4> bytes{};
  file.read_exact(bytes.data(), bytes.size(), what);
  return (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) |
         (std::uint32_t{bytes[2]} << 8) | std::uint32_t{bytes[3]};
}

void expect_magic(BinaryFile& file, std::uint32_t expected, const char* kind) {
  const std::uint32_t found = read_big_endian_u32(file, "IDX magic number");
  if (found != expected) {
    throw DataError(file.path(), "not an IDX " + std::string(kind) + " file: expected magic " +
                                     hex32(expected) + ", found " + hex32(found));
  }
}

void expect_in_range(const BinaryFile& file, const char* field, std::uint32_t value,
                     std::uint32_t max) {
  if (value == 0 || value > max) {
    throw DataError(file.path(), "corrupt IDX header: " + std::string(field) + " is " +
                                     std::to_string(value) + ", expected 1.." +
                                     std::to_string(max));
  }
}

// A raw file's size is known before reading, so a header that disagrees with it
// is reported as such (and nothing is allocated for it).
void expect_raw_size(const BinaryFile& file, std::uint64_t header_bytes,
                     std::uint64_t payload_bytes, const std::string& header_summary) {
  if (!file.raw_size()) {
    return;
  }
  const std::uint64_t expected = header_bytes + payload_bytes;
  if (*file.raw_size() != expected) {
    throw DataError(file.path(), "file size is " + std::to_string(*file.raw_size()) +
                                     " bytes, but its header (" + header_summary + ") implies " +
                                     std::to_string(expected));
  }
}

void expect_no_trailing_data(BinaryFile& file) {
  if (!file.at_end()) {
    throw DataError(file.path(), "trailing data: expected the data to end after " +
                                     std::to_string(file.offset()) + " bytes, found more");
  }
}

struct ImagesHeader {
  std::uint32_t count = 0, rows = 0, cols = 0;
};

ImagesHeader read_images_header(BinaryFile& file) {
  expect_magic(file, kIdxImagesMagic, "images (unsigned byte, 3 dimensions)");
  ImagesHeader header;
  header.count = read_big_endian_u32(file, "IDX image count");
  header.rows = read_big_endian_u32(file, "IDX row count");
  header.cols = read_big_endian_u32(file, "IDX column count");
  expect_in_range(file, "image count", header.count, kIdxMaxCount);
  expect_in_range(file, "rows", header.rows, kIdxMaxSide);
  expect_in_range(file, "columns", header.cols, kIdxMaxSide);
  const std::uint64_t payload = std::uint64_t{header.count} * header.rows * header.cols;
  if (payload > kIdxMaxPayloadBytes) {
    throw DataError(file.path(), "corrupt IDX header: " + std::to_string(header.count) +
                                     " images of " + std::to_string(header.rows) + "x" +
                                     std::to_string(header.cols) + " would be " +
                                     std::to_string(payload) + " bytes, expected at most " +
                                     std::to_string(kIdxMaxPayloadBytes));
  }
  expect_raw_size(file, 16, payload,
                  std::to_string(header.count) + " images of " + std::to_string(header.rows) + "x" +
                      std::to_string(header.cols));
  return header;
}

std::uint32_t read_labels_header(BinaryFile& file) {
  expect_magic(file, kIdxLabelsMagic, "labels (unsigned byte, 1 dimension)");
  const std::uint32_t count = read_big_endian_u32(file, "IDX label count");
  expect_in_range(file, "label count", count, kIdxMaxCount);
  expect_raw_size(file, 8, count, std::to_string(count) + " labels");
  return count;
}

void expect_labels_below(const BinaryFile& file, const std::vector<std::uint8_t>& labels,
                         std::int64_t num_classes) {
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] >= num_classes) {
      throw DataError(file.path(), "label " + std::to_string(i) + " is " +
                                       std::to_string(labels[i]) + ", expected 0.." +
                                       std::to_string(num_classes - 1));
    }
  }
}

}  // namespace

ImageSet read_idx(const std::string& images_path, const std::string& labels_path,
                  std::int64_t num_classes) {
  if (num_classes < 1 || num_classes > 256) {
    throw std::invalid_argument("read_idx: num_classes is " + std::to_string(num_classes) +
                                ", expected 1..256 (labels are bytes)");
  }
  // Both headers are checked before either payload is read, so a mismatch costs
  // no decompression.
  BinaryFile images_file(images_path);
  BinaryFile labels_file(labels_path);
  const ImagesHeader header = read_images_header(images_file);
  const std::uint32_t label_count = read_labels_header(labels_file);
  if (label_count != header.count) {
    throw DataError(labels_path, "has " + std::to_string(label_count) + " labels, expected " +
                                     std::to_string(header.count) + " to match the images in " +
                                     images_path);
  }

  ImageSet set;
  set.channels = 1;
  set.height = header.rows;
  set.width = header.cols;
  set.num_classes = num_classes;
  set.pixels = images_file.read_vector(std::uint64_t{header.count} * header.rows * header.cols,
                                       "image pixels");
  expect_no_trailing_data(images_file);
  set.labels = labels_file.read_vector(label_count, "labels");
  expect_no_trailing_data(labels_file);
  expect_labels_below(labels_file, set.labels, num_classes);
  return set;
}

}  // namespace cmlbed::data
