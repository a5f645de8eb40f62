// A file of arrays as .npz (data.dataset = arrays): any input either reads or throws
// DataError naming the file; never a crash, and (run with -malloc_limit_mb) never an
// allocation that the input's size does not justify: the memory cap given here (16 MiB)
// bounds what a header may announce, and deflate output grows only as it arrives.
#include <cstddef>
#include <cstdint>

#include "cmlbed/data/array_file.hpp"
#include "cmlbed/data/data_error.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const cmlbed::fuzz::InputFile file("arrays.npz", data, size);
  try {
    cmlbed::data::read_array_file(file.path(), std::uint64_t{16} << 20);
  } catch (const cmlbed::data::DataError&) {
  }
  return 0;
}
