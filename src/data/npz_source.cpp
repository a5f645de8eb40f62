// The arrays of an .npz archive: one NAME.npy member per array.
#include <algorithm>

#include "array_source.hpp"
#include "cmlbed/data/data_error.hpp"
#include "cmlbed/data/npy_header.hpp"
#include "cmlbed/data/zip_archive.hpp"

namespace cmlbed::data {
namespace {

class NpzSource : public ArraySource {
 public:
  explicit NpzSource(const std::string& path) : archive_(path) {}

  std::vector<std::string> names() const override {
    std::vector<std::string> names;
    for (const ZipArchive::Member& member : archive_.members()) {
      const std::string& name = member.name;
      names.push_back(name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0
                          ? name.substr(0, name.size() - 4)
                          : name);
    }
    return names;
  }

  std::optional<ArrayHeader> header(const std::string& name) const override {
    const ZipArchive::Member* member = archive_.find(name + ".npy");
    if (member == nullptr) return std::nullopt;
    return layout(*member).first;
  }

  NumericArray read(const std::string& name) const override {
    const ZipArchive::Member& member = *archive_.find(name + ".npy");
    const auto [header, offset] = layout(member);
    NumericArray array;
    array.header = header;
    array.bytes = archive_.read(member);
    array.bytes.erase(array.bytes.begin(), array.bytes.begin() + static_cast<std::ptrdiff_t>(offset));
    return array;
  }

 private:
  // The header and where the elements start; checks that the member holds exactly the
  // elements its header announces.
  std::pair<ArrayHeader, std::size_t> layout(const ZipArchive::Member& member) const {
    const std::string where = archive_.path() + ":" + member.name;
    const std::vector<std::uint8_t> preamble = archive_.read(member, kNpyPreambleBytes);
    const std::size_t offset = npy_data_offset(preamble.data(), preamble.size(), where);
    const std::vector<std::uint8_t> head = archive_.read(member, offset);
    ArrayHeader header = parse_npy_header(head.data(), head.size(), where);
    if (member.size < offset || member.size - offset != header.bytes()) {
      throw DataError(where, "holds " + std::to_string(member.size - std::min<std::uint64_t>(member.size, offset)) +
                                 " bytes of elements, but its header announces a " + header.describe() +
                                 " (" + std::to_string(header.bytes()) + " bytes)");
    }
    return {std::move(header), offset};
  }

  ZipArchive archive_;
};

}  // namespace

std::unique_ptr<ArraySource> open_npz(const std::string& path) { return std::make_unique<NpzSource>(path); }

}  // namespace cmlbed::data
