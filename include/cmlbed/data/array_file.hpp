#pragma once
// data.dataset = arrays: a researcher's own data in one file of four arrays,
//   train_images, test_images  N x C x H x W, or N x H x W (one channel);
//                              uint8 (scaled by 1/255 when trained on) or float32 (as is)
//   train_labels, test_labels  N integers, 0..K-1 (K <= 256: the classes)
// and optionally mean and std (C numbers each), which normalise every channel:
// (x - mean[c]) / std[c]. The file is NumPy's .npz (numpy.savez or savez_compressed) or
// HDF5 (.h5 / .hdf5, one dataset per array at the root).
#include <cstdint>
#include <string>

#include "cmlbed/data/dataset_loader.hpp"
#include "cmlbed/data/numeric_array.hpp"

namespace cmlbed::data {

struct ArrayFileSummary {
  std::int64_t channels = 0, height = 0, width = 0;
  std::int64_t num_classes = 0;  // the largest label of either split, plus one
  std::uint64_t train_samples = 0, test_samples = 0;
  ElementType image_type = ElementType::uint8;
  bool normalised = false;        // mean and std are given
  std::uint64_t memory_bytes = 0;  // what the data set takes in memory once read
};

// Half of this machine's memory: the most an array file may take once read.
std::uint64_t default_array_memory_cap();

// Everything about the file except its images' pixels, with every check that does not
// need them: the four arrays are there, their types are supported, their shapes agree,
// neither split is empty, the labels are in 0..255, mean and std come together with one
// value per channel (std > 0), and the data set fits in `memory_cap` bytes. Each failure
// is a DataError with one line that names the file and says what to do.
ArrayFileSummary inspect_array_file(const std::string& path, std::uint64_t memory_cap);

// The data set, after inspect_array_file's checks and a check that float32 images hold
// no NaN or infinity.
Dataset read_array_file(const std::string& path, std::uint64_t memory_cap);

}  // namespace cmlbed::data
