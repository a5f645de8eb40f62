#include "cmlbed/data/npy_header.hpp"

#include <cctype>
#include <cstring>
#include <optional>

#include "cmlbed/data/data_error.hpp"

namespace cmlbed::data {
namespace {

constexpr std::size_t kMaxDimensions = 8;

// A cursor over the header's dict literal; every method throws DataError at the first
// character that is not what numpy writes.
class DictReader {
 public:
  DictReader(std::string text, std::string source) : text_(std::move(text)), source_(std::move(source)) {}

  void skip_spaces() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool accept(char c) {
    skip_spaces();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  void expect(char c, const char* where) {
    if (!accept(c)) fail(std::string("expected '") + c + "' " + where);
  }
  std::string quoted() {
    skip_spaces();
    if (at_ >= text_.size() || (text_[at_] != '\'' && text_[at_] != '"')) fail("expected a quoted string");
    const char quote = text_[at_++];
    const std::size_t end = text_.find(quote, at_);
    if (end == std::string::npos) fail("a string is not closed");
    std::string value = text_.substr(at_, end - at_);
    at_ = end + 1;
    return value;
  }
  bool boolean() {
    skip_spaces();
    for (const auto& [word, value] : {std::pair<const char*, bool>{"True", true}, {"False", false}}) {
      if (text_.compare(at_, std::strlen(word), word) == 0) {
        at_ += std::strlen(word);
        return value;
      }
    }
    fail("expected True or False");
  }
  std::vector<std::uint64_t> tuple() {
    expect('(', "to open the shape");
    std::vector<std::uint64_t> sides;
    while (!accept(')')) {
      skip_spaces();
      if (at_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[at_]))) {
        fail("expected a non-negative integer in the shape");
      }
      std::uint64_t side = 0;
      while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) {
        if (side > (std::uint64_t{1} << 50)) fail("a dimension of the shape is absurdly large");
        side = side * 10 + static_cast<std::uint64_t>(text_[at_++] - '0');
      }
      sides.push_back(side);
      if (sides.size() > kMaxDimensions) fail("more than " + std::to_string(kMaxDimensions) + " dimensions");
      if (!accept(',')) {
        expect(')', "to close the shape");
        break;
      }
    }
    return sides;
  }
  [[noreturn]] void fail(const std::string& problem) const {
    throw DataError(source_, "not a .npy header numpy writes (" + problem + " at character " +
                                 std::to_string(at_) + " of \"" + text_.substr(0, 200) + "\")");
  }

 private:
  std::string text_;
  std::string source_;
  std::size_t at_ = 0;
};

ElementType element_type(const std::string& descr, const std::string& source) {
  const auto refuse = [&](const std::string& why) -> ElementType {
    throw DataError(source, "element type '" + descr + "' is not supported (" + why +
                                "); save images as uint8 or float32 and labels as integers, "
                                "little-endian");
  };
  if (descr.size() < 3) return refuse("not a simple numeric type");
  if (descr[0] == '>') return refuse("big-endian; convert with .astype('<" + descr.substr(1) + "')");
  if (descr[0] != '<' && descr[0] != '|' && descr[0] != '=') return refuse("not a simple numeric type");
  const std::string kind = descr.substr(1);
  static const std::pair<const char*, ElementType> kKnown[] = {
      {"u1", ElementType::uint8},   {"i1", ElementType::int8},   {"u2", ElementType::uint16},
      {"i2", ElementType::int16},   {"u4", ElementType::uint32}, {"i4", ElementType::int32},
      {"u8", ElementType::uint64},  {"i8", ElementType::int64},  {"f4", ElementType::float32},
      {"f8", ElementType::float64}};
  for (const auto& [name, type] : kKnown) {
    if (kind == name) return type;
  }
  return refuse("not an integer or a 32/64-bit float");
}

std::uint32_t little_endian(const std::uint8_t* bytes, std::size_t count) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < count; ++i) value |= std::uint32_t{bytes[i]} << (8 * i);
  return value;
}

}  // namespace

std::size_t npy_data_offset(const std::uint8_t* bytes, std::size_t size, const std::string& source) {
  static const char kMagic[] = "\x93NUMPY";
  if (size < 10 || std::memcmp(bytes, kMagic, 6) != 0) {
    throw DataError(source, "not a .npy array (it does not start with numpy's magic \\x93NUMPY)");
  }
  const int major = bytes[6];
  if (major < 1 || major > 3) {
    throw DataError(source, ".npy format version " + std::to_string(major) + " is not supported (1 to 3 are)");
  }
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  if (size < 8 + length_bytes) throw DataError(source, "truncated .npy preamble");
  const std::size_t header = little_endian(bytes + 8, length_bytes);
  if (header > kNpyMaxHeaderBytes) {
    throw DataError(source, "a .npy header of " + std::to_string(header) + " bytes is absurd; the file is corrupt");
  }
  return 8 + length_bytes + header;
}

ArrayHeader parse_npy_header(const std::uint8_t* bytes, std::size_t size, const std::string& source) {
  const std::size_t offset = npy_data_offset(bytes, size, source);
  if (size < offset) throw DataError(source, "truncated .npy header");
  const std::size_t start = bytes[6] == 1 ? 10 : 12;
  DictReader dict(std::string(reinterpret_cast<const char*>(bytes) + start, offset - start), source);
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<std::uint64_t>> shape;
  dict.expect('{', "at the start of the header");
  while (!dict.accept('}')) {
    const std::string key = dict.quoted();
    dict.expect(':', "after a key");
    if (key == "descr") {
      descr = dict.quoted();
    } else if (key == "fortran_order") {
      fortran_order = dict.boolean();
    } else if (key == "shape") {
      shape = dict.tuple();
    } else {
      dict.fail("unknown key '" + key + "'");
    }
    if (!dict.accept(',')) {
      dict.expect('}', "to close the header");
      break;
    }
  }
  if (!descr || !fortran_order || !shape) dict.fail("'descr', 'fortran_order' and 'shape' must all be given");
  if (*fortran_order) {
    throw DataError(source, "the array is in Fortran order; save np.ascontiguousarray(array) instead");
  }
  ArrayHeader header;
  header.type = element_type(*descr, source);
  header.shape = *shape;
  return header;
}

}  // namespace cmlbed::data
