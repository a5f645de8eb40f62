#include "cmlbed/data/numeric_array.hpp"

#include <cstring>
#include <limits>

namespace cmlbed::data {
namespace {

template <typename T>
T load(const std::vector<std::uint8_t>& bytes, std::uint64_t i) {
  T value;
  std::memcpy(&value, bytes.data() + i * sizeof(T), sizeof(T));
  return value;
}

std::uint64_t saturating_product(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) {
    return std::numeric_limits<std::uint64_t>::max();
  }
  return a * b;
}

}  // namespace

std::size_t element_bytes(ElementType type) {
  switch (type) {
    case ElementType::uint8:
    case ElementType::int8:
      return 1;
    case ElementType::uint16:
    case ElementType::int16:
      return 2;
    case ElementType::uint32:
    case ElementType::int32:
    case ElementType::float32:
      return 4;
    case ElementType::uint64:
    case ElementType::int64:
    case ElementType::float64:
      return 8;
  }
  return 1;
}

std::string element_name(ElementType type) {
  switch (type) {
    case ElementType::uint8: return "uint8";
    case ElementType::int8: return "int8";
    case ElementType::uint16: return "uint16";
    case ElementType::int16: return "int16";
    case ElementType::uint32: return "uint32";
    case ElementType::int32: return "int32";
    case ElementType::uint64: return "uint64";
    case ElementType::int64: return "int64";
    case ElementType::float32: return "float32";
    case ElementType::float64: return "float64";
  }
  return "unknown";
}

bool is_integer(ElementType type) {
  return type != ElementType::float32 && type != ElementType::float64;
}

std::uint64_t ArrayHeader::elements() const {
  std::uint64_t count = 1;
  for (const std::uint64_t side : shape) count = saturating_product(count, side);
  return count;
}

std::uint64_t ArrayHeader::bytes() const { return saturating_product(elements(), element_bytes(type)); }

std::string ArrayHeader::describe() const {
  std::string text = element_name(type) + " array of shape ";
  if (shape.empty()) return text + "() (a scalar)";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? "x" : "") + std::to_string(shape[i]);
  return text;
}

std::int64_t NumericArray::integer_at(std::uint64_t i) const {
  switch (header.type) {
    case ElementType::uint8: return load<std::uint8_t>(bytes, i);
    case ElementType::int8: return load<std::int8_t>(bytes, i);
    case ElementType::uint16: return load<std::uint16_t>(bytes, i);
    case ElementType::int16: return load<std::int16_t>(bytes, i);
    case ElementType::uint32: return load<std::uint32_t>(bytes, i);
    case ElementType::int32: return load<std::int32_t>(bytes, i);
    case ElementType::uint64: return static_cast<std::int64_t>(load<std::uint64_t>(bytes, i));
    case ElementType::int64: return load<std::int64_t>(bytes, i);
    case ElementType::float32:
    case ElementType::float64: break;
  }
  return -1;
}

double NumericArray::real_at(std::uint64_t i) const {
  if (header.type == ElementType::float32) return load<float>(bytes, i);
  if (header.type == ElementType::float64) return load<double>(bytes, i);
  return static_cast<double>(integer_at(i));
}

}  // namespace cmlbed::data
