#pragma once
// The members of a ZIP archive as numpy.savez (stored) and numpy.savez_compressed
// (deflated) write them, ZIP64 included. Read-only; nothing but the central directory is
// held in memory until a member is read.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace cmlbed::data {

class ZipArchive {
 public:
  struct Member {
    std::string name;
    std::uint16_t method = 0;  // 0 stored, 8 deflated
    std::uint16_t flags = 0;   // general purpose bits; bit 0: encrypted
    std::uint32_t crc32 = 0;
    std::uint64_t compressed_size = 0;
    std::uint64_t size = 0;  // uncompressed
    std::uint64_t local_header_offset = 0;
  };

  // Opens `path` and reads its central directory. Throws DataError naming the file when
  // it is missing, not a ZIP archive, spans several disks, or its directory points
  // outside the file.
  explicit ZipArchive(std::string path);

  const std::string& path() const noexcept { return path_; }
  const std::vector<Member>& members() const noexcept { return members_; }
  // The member called `name`, or nullptr.
  const Member* find(const std::string& name) const;

  // The member's first `limit` bytes (all of them when it is shorter). A whole member is
  // checked against its CRC-32. Throws DataError for an encrypted member, a compression
  // other than stored or deflate, corrupt deflate data or a wrong CRC.
  std::vector<std::uint8_t> read(const Member& member, std::uint64_t limit = UINT64_MAX) const;

 private:
  struct FileCloser {
    void operator()(std::FILE* file) const noexcept;
  };
  void read_at(std::uint64_t offset, void* destination, std::size_t n, const char* what) const;
  std::uint64_t data_offset(const Member& member) const;

  std::string path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
  std::uint64_t file_size_ = 0;
  std::vector<Member> members_;
};

}  // namespace cmlbed::data
