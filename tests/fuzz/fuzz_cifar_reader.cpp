// CIFAR-10 binary batches: any file either reads or throws DataError naming it.
#include <cstddef>
#include <cstdint>

#include "cmlbed/data/cifar_reader.hpp"
#include "cmlbed/data/data_error.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const cmlbed::fuzz::InputFile batch("batch.bin", data, size);
  try {
    cmlbed::data::read_cifar10({batch.path()});
  } catch (const cmlbed::data::DataError&) {
  }
  return 0;
}
