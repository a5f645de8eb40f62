#pragma once
// Loading a named data set's train and test splits from its usual files.

#include <string>
#include <vector>

#include "cmlbed/data/image_set.hpp"
#include "cmlbed/data/synthetic.hpp"

namespace cmlbed::data {

inline constexpr const char* kDefaultFashionMnistDir = "/usr/share/datasets/fashion-mnist";

struct DatasetSpec {
  std::string name = "fashion-mnist";  // fashion-mnist | mnist | cifar10 | synthetic | arrays
  // Empty = the default directory for the data set; only fashion-mnist has one
  // (kDefaultFashionMnistDir), mnist and cifar10 need it given.
  std::string dir;
  std::string file;               // arrays only: the .npz or HDF5 file (data/array_file.hpp)
  SyntheticSpec synthetic_train;  // synthetic only
  SyntheticSpec synthetic_test;   // synthetic only
};

struct Dataset {
  ImageSet train, test;
};

// The accepted values of DatasetSpec::name.
std::vector<std::string> dataset_names();

// The files load_dataset will read, so that configuration can be validated
// before any work starts. IDX data sets (mnist, fashion-mnist) accept each file
// raw or with ".gz": the existing one is returned, else the plain name. CIFAR-10
// reads data_batch_1..5.bin and test_batch.bin from dir, or from
// dir/cifar-10-batches-bin (the archive's own folder) when dir lacks them.
// Synthetic needs no files; arrays needs its one file. Throws std::invalid_argument for an unknown name or
// a missing dir where there is no default.
std::vector<std::string> required_files(const DatasetSpec& spec);

// Throws std::invalid_argument for a bad spec (as above, arrays without a file, or
// synthetic train and test specs that disagree on shape, classes or prototype_seed),
// DataError for missing or malformed files.
Dataset load_dataset(const DatasetSpec& spec);

// What partitioning the training set needs, and the test set's size.
struct DatasetLabels {
  std::vector<std::uint8_t> train_labels;
  std::int64_t num_classes = 0;
  std::size_t test_samples = 0;
};

// load_dataset's labels; a synthetic set's are made without its images. Same errors.
DatasetLabels load_labels(const DatasetSpec& spec);

}  // namespace cmlbed::data
