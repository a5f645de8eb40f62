#pragma once
// NumPy's .npy format, versions 1 to 3: the magic "\x93NUMPY", a version, the length of
// a header that is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (60000, 28, 28), }
// and then the elements in C order. Only what numpy.save writes for little-endian
// numbers is accepted; everything else is a DataError that says why.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cmlbed/data/numeric_array.hpp"

namespace cmlbed::data {

// Bytes that always hold the magic, the version and the header's length.
inline constexpr std::size_t kNpyPreambleBytes = 12;
// A header beyond this is refused as corrupt (numpy writes about 128 bytes).
inline constexpr std::size_t kNpyMaxHeaderBytes = std::size_t{1} << 20;

// The bytes from the start of the file to the first element, from its first
// kNpyPreambleBytes (or all the bytes there are, when fewer). `source` names the array
// in errors ("data.npz:train_images.npy").
std::size_t npy_data_offset(const std::uint8_t* bytes, std::size_t size, const std::string& source);

// The array's type and shape, from at least npy_data_offset() bytes. Throws DataError
// for a header numpy would not write, fortran_order True, a big-endian or non-numeric
// element type, or more than 8 dimensions.
ArrayHeader parse_npy_header(const std::uint8_t* bytes, std::size_t size, const std::string& source);

}  // namespace cmlbed::data
