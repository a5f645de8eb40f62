#include "cmlbed/data/binary_file.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "cmlbed/data/data_error.hpp"

namespace cmlbed::data {
namespace {

// Untrusted sizes are read in pieces of this size, so a vector never holds more
// than one piece beyond the bytes that actually arrived.
constexpr std::size_t kChunkBytes = std::size_t{1} << 24;  // 16 MiB

// gzread takes an unsigned count and returns an int, so large reads are split.
constexpr std::size_t kMaxGzRead = std::size_t{1} << 30;

bool starts_with_gzip_magic(std::FILE* file) {
  unsigned char magic[2] = {0, 0};
  const std::size_t got = std::fread(magic, 1, sizeof magic, file);
  return got == sizeof magic && magic[0] == 0x1f && magic[1] == 0x8b;
}

}  // namespace

void BinaryFile::FileCloser::operator()(std::FILE* file) const noexcept { std::fclose(file); }

void BinaryFile::GzCloser::operator()(gzFile_s* file) const noexcept { gzclose(file); }

BinaryFile::BinaryFile(std::string path) : path_(std::move(path)) {
  namespace fs = std::filesystem;
  std::error_code error;
  // fopen succeeds on a directory under Linux, and the later read error would be
  // far less clear than saying so here.
  if (fs::is_directory(path_, error)) {
    throw DataError(path_, "cannot open: is a directory, expected a file");
  }
  file_.reset(std::fopen(path_.c_str(), "rb"));
  if (!file_) {
    throw DataError(path_, std::string("cannot open: ") + std::strerror(errno));
  }
  if (starts_with_gzip_magic(file_.get())) {
    file_.reset();
    gz_.reset(gzopen(path_.c_str(), "rb"));
    if (!gz_) {
      throw DataError(path_, "cannot open as gzip: " + std::string(std::strerror(errno)));
    }
    gzbuffer(gz_.get(), 1U << 17);  // fewer system calls than the 8 KiB default
    return;
  }
  if (std::fseek(file_.get(), 0, SEEK_SET) != 0) {
    throw DataError(path_, std::string("cannot rewind: ") + std::strerror(errno));
  }
  const std::uintmax_t size = fs::file_size(path_, error);
  if (error) {
    throw DataError(path_, "cannot determine file size: " + error.message());
  }
  raw_size_ = static_cast<std::uint64_t>(size);
}

std::size_t BinaryFile::read_from_source(unsigned char* destination, std::size_t n) {
  if (file_) {
    const std::size_t got = std::fread(destination, 1, n, file_.get());
    if (got < n && std::ferror(file_.get())) {
      throw DataError(path_, std::string("read error: ") + std::strerror(errno));
    }
    return got;
  }
  std::size_t total = 0;
  while (total < n) {
    const auto request = static_cast<unsigned>(std::min(n - total, kMaxGzRead));
    const int got = gzread(gz_.get(), destination + total, request);
    if (got < 0) {
      int code = Z_OK;
      const char* message = gzerror(gz_.get(), &code);
      throw DataError(path_, "corrupt gzip stream after " + std::to_string(offset_ + total) +
                                 " decompressed bytes: " + message);
    }
    if (got == 0) {
      break;
    }
    total += static_cast<std::size_t>(got);
  }
  return total;
}

std::size_t BinaryFile::read_some(void* destination, std::size_t n) {
  auto* out = static_cast<unsigned char*>(destination);
  std::size_t delivered = 0;
  if (n > 0 && lookahead_ >= 0) {
    out[0] = static_cast<unsigned char>(lookahead_);
    lookahead_ = -1;
    delivered = 1;
  }
  delivered += read_from_source(out + delivered, n - delivered);
  offset_ += delivered;
  return delivered;
}

void BinaryFile::throw_truncated(std::uint64_t expected, std::uint64_t got,
                                 const char* what) const {
  std::string message = "truncated: expected " + std::to_string(expected) + " more bytes of " +
                        what + " at offset " + std::to_string(offset_ - got) + ", found only " +
                        std::to_string(got);
  if (gz_) {
    int code = Z_OK;
    const char* detail = gzerror(gz_.get(), &code);
    if (code != Z_OK) {
      message += " (gzip: " + std::string(detail) + ")";
    }
  }
  throw DataError(path_, message);
}

void BinaryFile::read_exact(void* destination, std::size_t n, const char* what) {
  const std::size_t got = read_some(destination, n);
  if (got != n) {
    throw_truncated(n, got, what);
  }
}

std::vector<std::uint8_t> BinaryFile::read_vector(std::uint64_t n, const char* what) {
  std::vector<std::uint8_t> bytes;
  if (raw_size_) {
    // The size on disk bounds what can arrive, so allocating up front is safe.
    const std::uint64_t remaining = *raw_size_ - std::min(*raw_size_, offset_);
    if (n > remaining) {
      throw DataError(path_, "truncated: expected " + std::to_string(n) + " more bytes of " + what +
                                 " at offset " + std::to_string(offset_) +
                                 ", but the file has only " + std::to_string(remaining));
    }
    bytes.resize(static_cast<std::size_t>(n));
    read_exact(bytes.data(), bytes.size(), what);
    return bytes;
  }
  const std::uint64_t start = offset_;
  while (bytes.size() < n) {
    const std::size_t piece =
        static_cast<std::size_t>(std::min<std::uint64_t>(n - bytes.size(), kChunkBytes));
    const std::size_t old_size = bytes.size();
    bytes.resize(old_size + piece);
    const std::size_t got = read_some(bytes.data() + old_size, piece);
    if (got != piece) {
      const std::uint64_t arrived = old_size + got;
      int code = Z_OK;
      const char* detail = gzerror(gz_.get(), &code);
      throw DataError(path_, "truncated: expected " + std::to_string(n) + " bytes of " + what +
                                 " at offset " + std::to_string(start) + ", found only " +
                                 std::to_string(arrived) +
                                 (code != Z_OK ? " (gzip: " + std::string(detail) + ")" : ""));
    }
  }
  return bytes;
}

std::vector<std::uint8_t> BinaryFile::read_to_end(std::uint64_t max_bytes, const char* what) {
  std::vector<std::uint8_t> bytes;
  for (;;) {
    const std::size_t old_size = bytes.size();
    bytes.resize(old_size + kChunkBytes);
    const std::size_t got = read_some(bytes.data() + old_size, kChunkBytes);
    bytes.resize(old_size + got);
    if (bytes.size() > max_bytes) {
      throw DataError(path_, "too large: expected at most " + std::to_string(max_bytes) +
                                 " bytes of " + what + ", found more");
    }
    if (got < kChunkBytes) {
      return bytes;
    }
  }
}

bool BinaryFile::at_end() {
  if (lookahead_ >= 0) {
    return false;
  }
  unsigned char byte = 0;
  if (read_from_source(&byte, 1) == 0) {
    return true;
  }
  lookahead_ = byte;
  return false;
}

}  // namespace cmlbed::data
