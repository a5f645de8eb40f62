#pragma once
// A numeric array as the array-file readers (.npy inside .npz, HDF5) find it: its element
// type, its shape and, once read, its elements in C order and this machine's byte order.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cmlbed::data {

enum class ElementType { uint8, int8, uint16, int16, uint32, int32, uint64, int64, float32, float64 };

std::size_t element_bytes(ElementType type);
// NumPy's name of the type: "uint8", "float32", ...
std::string element_name(ElementType type);
bool is_integer(ElementType type);

struct ArrayHeader {
  ElementType type = ElementType::uint8;
  std::vector<std::uint64_t> shape;

  // Both saturate at UINT64_MAX instead of overflowing; readers refuse such shapes.
  std::uint64_t elements() const;
  std::uint64_t bytes() const;
  // "uint8 array of shape 60000x28x28"
  std::string describe() const;
};

struct NumericArray {
  ArrayHeader header;
  std::vector<std::uint8_t> bytes;  // header.bytes() of them

  // Element `i` as a signed 64-bit integer (integer types only; uint64 values beyond
  // INT64_MAX come back negative, which every caller refuses as out of range).
  std::int64_t integer_at(std::uint64_t i) const;
  // Element `i` as a double (any type).
  double real_at(std::uint64_t i) const;
};

}  // namespace cmlbed::data
