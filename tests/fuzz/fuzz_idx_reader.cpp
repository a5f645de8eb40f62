// IDX images + labels (MNIST / Fashion-MNIST, raw or gzip): any pair of files either
// reads or throws DataError naming the file; never a crash, and (run with
// -malloc_limit_mb) never an allocation the file's size does not justify. The input's
// first two bytes give the length of the images part; the rest is the labels file.
#include <cstddef>
#include <cstdint>

#include "cmlbed/data/data_error.hpp"
#include "cmlbed/data/idx_reader.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  std::size_t images = static_cast<std::size_t>(data[0]) << 8 | data[1];
  data += 2;
  size -= 2;
  if (images > size) images = size;
  const cmlbed::fuzz::InputFile image_file("images", data, images);
  const cmlbed::fuzz::InputFile label_file("labels", data + images, size - images);
  try {
    cmlbed::data::read_idx(image_file.path(), label_file.path(), 10);
  } catch (const cmlbed::data::DataError&) {
  }
  return 0;
}
