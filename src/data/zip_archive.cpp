#include "cmlbed/data/zip_archive.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "cmlbed/data/data_error.hpp"

namespace cmlbed::data {
namespace {

constexpr std::uint32_t kEndOfDirectory = 0x06054b50;
constexpr std::uint32_t kZip64EndLocator = 0x07064b50;
constexpr std::uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr std::uint32_t kDirectoryEntry = 0x02014b50;
constexpr std::uint32_t kLocalHeader = 0x04034b50;
constexpr std::size_t kEndRecordBytes = 22;
constexpr std::size_t kMaxCommentBytes = 0xffff;
constexpr std::size_t kDirectoryEntryBytes = 46;
constexpr std::size_t kLocalHeaderBytes = 30;
constexpr std::uint64_t kMaxMembers = 1 << 16;
constexpr std::size_t kChunkBytes = std::size_t{1} << 18;

std::uint64_t little(const std::uint8_t* bytes, std::size_t count) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < count; ++i) value |= std::uint64_t{bytes[i]} << (8 * i);
  return value;
}

// Replaces the 32-bit fields that say 0xffffffff by the values of the ZIP64 extra field
// (id 1), which holds them in this order, each present only when needed.
void apply_zip64_extra(const std::uint8_t* extra, std::size_t length, ZipArchive::Member& member,
                       const std::string& path) {
  for (std::size_t at = 0; at + 4 <= length;) {
    const auto id = little(extra + at, 2);
    const auto size = static_cast<std::size_t>(little(extra + at + 2, 2));
    if (at + 4 + size > length) break;
    if (id == 1) {
      const std::uint8_t* field = extra + at + 4;
      std::size_t used = 0;
      for (std::uint64_t* value : {&member.size, &member.compressed_size, &member.local_header_offset}) {
        if (*value != 0xffffffff) continue;
        if (used + 8 > size) throw DataError(path, "a ZIP64 extra field is too short for " + member.name);
        *value = little(field + used, 8);
        used += 8;
      }
      return;
    }
    at += 4 + size;
  }
}

// zlib's raw-deflate stream, ended in every case.
class Inflater {
 public:
  Inflater() {
    if (inflateInit2(&stream_, -MAX_WBITS) != Z_OK) throw std::bad_alloc();
  }
  ~Inflater() { inflateEnd(&stream_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  z_stream& stream() { return stream_; }

 private:
  z_stream stream_{};
};

}  // namespace

void ZipArchive::FileCloser::operator()(std::FILE* file) const noexcept { std::fclose(file); }

ZipArchive::ZipArchive(std::string path) : path_(std::move(path)) {
  file_.reset(std::fopen(path_.c_str(), "rb"));
  if (!file_) throw DataError(path_, "cannot open: " + std::string(std::strerror(errno)));
  if (std::fseek(file_.get(), 0, SEEK_END) != 0) throw DataError(path_, "cannot seek (is it a directory?)");
  const long end = std::ftell(file_.get());
  if (end < 0) throw DataError(path_, "cannot tell its size: " + std::string(std::strerror(errno)));
  file_size_ = static_cast<std::uint64_t>(end);

  // The end record sits in the last 22 bytes plus a comment of up to 64 KiB.
  const std::uint64_t tail_bytes = std::min<std::uint64_t>(file_size_, kEndRecordBytes + kMaxCommentBytes);
  std::vector<std::uint8_t> tail(static_cast<std::size_t>(tail_bytes));
  read_at(file_size_ - tail_bytes, tail.data(), tail.size(), "end of the archive");
  std::size_t record = tail.size();
  for (std::size_t at = tail.size() >= kEndRecordBytes ? tail.size() - kEndRecordBytes + 1 : 0; at-- > 0;) {
    if (little(tail.data() + at, 4) == kEndOfDirectory) {
      record = at;
      break;
    }
  }
  if (record == tail.size()) {
    throw DataError(path_, "not a ZIP archive (no end-of-directory record); save arrays with numpy.savez");
  }
  const std::uint8_t* end_record = tail.data() + record;
  std::uint64_t count = little(end_record + 10, 2);
  std::uint64_t directory_size = little(end_record + 12, 4);
  std::uint64_t directory_offset = little(end_record + 16, 4);
  if (little(end_record + 4, 2) != 0 || little(end_record + 6, 2) != 0) {
    throw DataError(path_, "a ZIP archive that spans several disks is not supported");
  }
  const std::uint64_t record_offset = file_size_ - tail_bytes + record;
  if (count == 0xffff || directory_size == 0xffffffff || directory_offset == 0xffffffff) {
    if (record_offset < 20) throw DataError(path_, "a ZIP64 archive without its locator");
    std::uint8_t locator[20];
    read_at(record_offset - 20, locator, sizeof locator, "ZIP64 locator");
    if (little(locator, 4) != kZip64EndLocator) throw DataError(path_, "a ZIP64 archive without its locator");
    std::uint8_t zip64[56];
    read_at(little(locator + 8, 8), zip64, sizeof zip64, "ZIP64 end record");
    if (little(zip64, 4) != kZip64EndOfDirectory) throw DataError(path_, "a corrupt ZIP64 end record");
    count = little(zip64 + 32, 8);
    directory_size = little(zip64 + 40, 8);
    directory_offset = little(zip64 + 48, 8);
  }
  if (count > kMaxMembers || directory_offset > file_size_ || directory_size > file_size_ - directory_offset) {
    throw DataError(path_, "a corrupt ZIP directory (" + std::to_string(count) + " members, " +
                               std::to_string(directory_size) + " bytes at " + std::to_string(directory_offset) +
                               " in a file of " + std::to_string(file_size_) + ")");
  }
  std::vector<std::uint8_t> directory(static_cast<std::size_t>(directory_size));
  read_at(directory_offset, directory.data(), directory.size(), "ZIP directory");
  std::size_t at = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (at + kDirectoryEntryBytes > directory.size() || little(directory.data() + at, 4) != kDirectoryEntry) {
      throw DataError(path_, "a corrupt ZIP directory (entry " + std::to_string(i) + ")");
    }
    const std::uint8_t* entry = directory.data() + at;
    const auto name_length = static_cast<std::size_t>(little(entry + 28, 2));
    const auto extra_length = static_cast<std::size_t>(little(entry + 30, 2));
    const auto comment_length = static_cast<std::size_t>(little(entry + 32, 2));
    if (at + kDirectoryEntryBytes + name_length + extra_length + comment_length > directory.size()) {
      throw DataError(path_, "a corrupt ZIP directory (entry " + std::to_string(i) + " runs past its end)");
    }
    Member member;
    member.flags = static_cast<std::uint16_t>(little(entry + 8, 2));
    member.method = static_cast<std::uint16_t>(little(entry + 10, 2));
    member.crc32 = static_cast<std::uint32_t>(little(entry + 16, 4));
    member.compressed_size = little(entry + 20, 4);
    member.size = little(entry + 24, 4);
    member.local_header_offset = little(entry + 42, 4);
    member.name.assign(reinterpret_cast<const char*>(entry + kDirectoryEntryBytes), name_length);
    apply_zip64_extra(entry + kDirectoryEntryBytes + name_length, extra_length, member, path_);
    members_.push_back(std::move(member));
    at += kDirectoryEntryBytes + name_length + extra_length + comment_length;
  }
}

const ZipArchive::Member* ZipArchive::find(const std::string& name) const {
  for (const Member& member : members_) {
    if (member.name == name) return &member;
  }
  return nullptr;
}

void ZipArchive::read_at(std::uint64_t offset, void* destination, std::size_t n, const char* what) const {
  if (offset > file_size_ || n > file_size_ - offset) {
    throw DataError(path_, std::string("truncated: the ") + what + " runs past the end of the file");
  }
  if (n == 0) return;
  if (offset > static_cast<std::uint64_t>(std::numeric_limits<long>::max()) ||
      std::fseek(file_.get(), static_cast<long>(offset), SEEK_SET) != 0 ||
      std::fread(destination, 1, n, file_.get()) != n) {
    throw DataError(path_, std::string("cannot read the ") + what);
  }
}

std::uint64_t ZipArchive::data_offset(const Member& member) const {
  std::uint8_t header[kLocalHeaderBytes];
  read_at(member.local_header_offset, header, sizeof header, "member's local header");
  if (little(header, 4) != kLocalHeader) {
    throw DataError(path_, "a corrupt ZIP archive (no local header for " + member.name + ")");
  }
  return member.local_header_offset + kLocalHeaderBytes + little(header + 26, 2) + little(header + 28, 2);
}

std::vector<std::uint8_t> ZipArchive::read(const Member& member, std::uint64_t limit) const {
  const std::string where = path_ + ":" + member.name;
  if (member.flags & 1) throw DataError(where, "the member is encrypted");
  if (member.method != 0 && member.method != 8) {
    throw DataError(where, "compression method " + std::to_string(member.method) +
                               " is not supported (stored and deflate are: numpy.savez, savez_compressed)");
  }
  const std::uint64_t wanted = std::min(limit, member.size);
  const std::uint64_t offset = data_offset(member);
  std::vector<std::uint8_t> out;
  if (member.method == 0) {
    if (member.compressed_size != member.size) throw DataError(where, "a stored member whose two sizes differ");
    out.resize(static_cast<std::size_t>(wanted));
    read_at(offset, out.data(), out.size(), "member's data");
  } else {
    if (offset > file_size_ || member.compressed_size > file_size_ - offset) {
      throw DataError(where, "truncated: the member runs past the end of the file");
    }
    Inflater inflater;
    z_stream& stream = inflater.stream();
    std::vector<std::uint8_t> input;
    std::uint64_t consumed = 0;
    int status = Z_OK;
    // Grows only as bytes come out, so a member that claims a huge size costs nothing
    // until its data deliver it.
    while (out.size() < wanted && status != Z_STREAM_END) {
      if (stream.avail_in == 0) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, member.compressed_size - consumed));
        if (n == 0) throw DataError(where, "truncated deflate data");
        input.resize(n);
        read_at(offset + consumed, input.data(), n, "member's data");
        consumed += n;
        stream.next_in = input.data();
        stream.avail_in = static_cast<uInt>(n);
      }
      const std::size_t before = out.size();
      const auto room = static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, wanted - before));
      out.resize(before + room);
      stream.next_out = out.data() + before;
      stream.avail_out = static_cast<uInt>(room);
      status = inflate(&stream, Z_NO_FLUSH);
      out.resize(before + room - stream.avail_out);
      if (status != Z_OK && status != Z_STREAM_END && !(status == Z_BUF_ERROR && stream.avail_in == 0)) {
        throw DataError(where, "corrupt deflate data" + (stream.msg ? ": " + std::string(stream.msg) : std::string()));
      }
    }
    if (out.size() < wanted) {
      throw DataError(where, "the deflate data end after " + std::to_string(out.size()) + " of " +
                                 std::to_string(member.size) + " bytes");
    }
  }
  if (wanted == member.size) {
    uLong crc = crc32(0L, Z_NULL, 0);
    for (std::size_t done = 0; done < out.size();) {
      const auto n = static_cast<uInt>(std::min<std::size_t>(out.size() - done, 1U << 30));
      crc = crc32(crc, out.data() + done, n);
      done += n;
    }
    if (crc != member.crc32) throw DataError(where, "CRC-32 mismatch: the member is corrupt");
  }
  return out;
}

}  // namespace cmlbed::data
