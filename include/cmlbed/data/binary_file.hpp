#pragma once
// Sequential reading of a file that is either raw or gzip-compressed, so that
// every reader accepts both "train-images-idx3-ubyte" and its ".gz" as shipped.
// Compression is detected from the gzip magic bytes (1f 8b), not the file name.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct gzFile_s;  // zlib's handle type; declared here to keep <zlib.h> out of headers

namespace cmlbed::data {

class BinaryFile {
 public:
  // Opens `path`; throws DataError naming it when it is missing, a directory or
  // unreadable.
  explicit BinaryFile(std::string path);

  const std::string& path() const noexcept { return path_; }
  bool is_gzip() const noexcept { return gz_ != nullptr; }

  // Size on disk of a raw file, known before any reading, so that a header can be
  // checked against it before anything is allocated. Empty for gzip, whose
  // decompressed size is only known once it has all been read.
  std::optional<std::uint64_t> raw_size() const noexcept { return raw_size_; }

  // Bytes delivered to the caller so far (decompressed bytes for gzip).
  std::uint64_t offset() const noexcept { return offset_; }

  // Reads up to `n` bytes; returns fewer only at the end of the data. Throws
  // DataError on an I/O error or a corrupt gzip stream.
  std::size_t read_some(void* destination, std::size_t n);

  // Reads exactly `n` bytes, or throws DataError
  // "<path>: truncated: expected N more bytes of <what> ...".
  void read_exact(void* destination, std::size_t n, const char* what = "data");

  // Reads exactly `n` bytes into a new vector. The vector grows only as bytes
  // actually arrive, so a header that claims more than the file holds costs a
  // DataError, not a huge allocation.
  std::vector<std::uint8_t> read_vector(std::uint64_t n, const char* what = "data");

  // Reads everything that is left; throws DataError when that is more than
  // `max_bytes`.
  std::vector<std::uint8_t> read_to_end(std::uint64_t max_bytes, const char* what = "data");

  // True when no bytes remain: the check for trailing data after a payload.
  bool at_end();

 private:
  struct FileCloser {
    void operator()(std::FILE* file) const noexcept;
  };
  struct GzCloser {
    void operator()(gzFile_s* file) const noexcept;
  };

  std::size_t read_from_source(unsigned char* destination, std::size_t n);
  [[noreturn]] void throw_truncated(std::uint64_t expected, std::uint64_t got,
                                    const char* what) const;

  std::string path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
  std::unique_ptr<gzFile_s, GzCloser> gz_;
  std::optional<std::uint64_t> raw_size_;
  std::uint64_t offset_ = 0;
  int lookahead_ = -1;  // a byte read by at_end() and not yet delivered, or -1
};

}  // namespace cmlbed::data
