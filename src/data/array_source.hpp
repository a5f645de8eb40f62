#pragma once
// Named numeric arrays in one file, whatever its format: the .npz and HDF5 readers behind
// data.dataset = arrays. Private to src/data.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cmlbed/data/numeric_array.hpp"

namespace cmlbed::data {

class ArraySource {
 public:
  virtual ~ArraySource() = default;
  // The names of the arrays the file holds, for messages about a missing one.
  virtual std::vector<std::string> names() const = 0;
  // The array's type and shape without reading its elements; empty when there is none
  // called `name`. Throws DataError for an array of a type that is not supported.
  virtual std::optional<ArrayHeader> header(const std::string& name) const = 0;
  // The whole array (the caller checked header(name)->bytes() against its memory cap).
  virtual NumericArray read(const std::string& name) const = 0;
};

// By the file's extension: .npz (numpy.savez or savez_compressed), .h5 or .hdf5 (e.g.
// h5py). Throws DataError naming the file for any other extension or a file that cannot
// be opened as one.
std::unique_ptr<ArraySource> open_array_source(const std::string& path);

std::unique_ptr<ArraySource> open_npz(const std::string& path);
std::unique_ptr<ArraySource> open_hdf5_arrays(const std::string& path);

}  // namespace cmlbed::data
