#include "cmlbed/data/dataset_loader.hpp"

#include <filesystem>
#include <stdexcept>

#include "cmlbed/data/array_file.hpp"
#include "cmlbed/data/cifar_reader.hpp"
#include "cmlbed/data/idx_reader.hpp"

namespace cmlbed::data {
namespace {

namespace fs = std::filesystem;

enum class Format { idx, cifar10, synthetic, arrays };

Format format_of(const std::string& name) {
  if (name == "fashion-mnist" || name == "mnist") return Format::idx;
  if (name == "cifar10") return Format::cifar10;
  if (name == "synthetic") return Format::synthetic;
  if (name == "arrays") return Format::arrays;
  std::string allowed;
  for (const std::string& known : dataset_names()) {
    allowed += (allowed.empty() ? "" : ", ") + known;
  }
  throw std::invalid_argument("unknown dataset '" + name + "'; expected one of: " + allowed);
}

fs::path directory_of(const DatasetSpec& spec) {
  if (!spec.dir.empty()) return spec.dir;
  if (spec.name == "fashion-mnist") return kDefaultFashionMnistDir;
  throw std::invalid_argument("dataset '" + spec.name +
                              "' has no default directory; give the directory that holds it");
}

bool present(const fs::path& path) {
  std::error_code error;  // an unreadable path counts as absent; reading will say why
  return fs::exists(path, error);
}

// The file as shipped may be gzip'd or not; prefer whichever is present.
std::string raw_or_gz(const fs::path& dir, const std::string& name) {
  const fs::path plain = dir / name;
  const fs::path gz = dir / (name + ".gz");
  if (!present(plain) && present(gz)) return gz.string();
  return plain.string();
}

std::vector<std::string> idx_files(const fs::path& dir) {
  return {raw_or_gz(dir, "train-images-idx3-ubyte"), raw_or_gz(dir, "train-labels-idx1-ubyte"),
          raw_or_gz(dir, "t10k-images-idx3-ubyte"), raw_or_gz(dir, "t10k-labels-idx1-ubyte")};
}

// data_batch_1..5.bin then test_batch.bin.
std::vector<std::string> cifar_files(fs::path dir) {
  if (!present(dir / "data_batch_1.bin") && present(dir / "cifar-10-batches-bin")) {
    dir /= "cifar-10-batches-bin";
  }
  std::vector<std::string> files;
  for (int batch = 1; batch <= 5; ++batch) {
    files.push_back((dir / ("data_batch_" + std::to_string(batch) + ".bin")).string());
  }
  files.push_back((dir / "test_batch.bin").string());
  return files;
}

std::string file_of(const DatasetSpec& spec) {
  if (spec.file.empty()) {
    throw std::invalid_argument("data.dataset = arrays needs data.file (an .npz or HDF5 file of arrays)");
  }
  return spec.file;
}

// A test set drawn with other prototypes, or another shape, could not be
// predicted from the train set; refuse such a pair up front.
void expect_compatible(const SyntheticSpec& train, const SyntheticSpec& test) {
  if (train.channels != test.channels || train.height != test.height || train.width != test.width ||
      train.num_classes != test.num_classes || train.prototype_seed != test.prototype_seed) {
    throw std::invalid_argument(
        "synthetic dataset: train and test specs must agree on channels, height, width, "
        "num_classes and prototype_seed");
  }
}

}  // namespace

std::vector<std::string> dataset_names() {
  return {"fashion-mnist", "mnist", "cifar10", "synthetic", "arrays"};
}

std::vector<std::string> required_files(const DatasetSpec& spec) {
  switch (format_of(spec.name)) {
    case Format::idx:
      return idx_files(directory_of(spec));
    case Format::cifar10:
      return cifar_files(directory_of(spec));
    case Format::synthetic:
      return {};
    case Format::arrays:
      return {file_of(spec)};
  }
  return {};
}

Dataset load_dataset(const DatasetSpec& spec) {
  Dataset dataset;
  switch (format_of(spec.name)) {
    case Format::idx: {
      const std::vector<std::string> files = idx_files(directory_of(spec));
      dataset.train = read_idx(files[0], files[1]);
      dataset.test = read_idx(files[2], files[3]);
      break;
    }
    case Format::cifar10: {
      std::vector<std::string> files = cifar_files(directory_of(spec));
      const std::string test_file = files.back();
      files.pop_back();
      dataset.train = read_cifar10(files);
      dataset.test = read_cifar10({test_file});
      break;
    }
    case Format::synthetic:
      expect_compatible(spec.synthetic_train, spec.synthetic_test);
      dataset.train = make_synthetic(spec.synthetic_train);
      dataset.test = make_synthetic(spec.synthetic_test);
      break;
    case Format::arrays:
      dataset = read_array_file(file_of(spec), default_array_memory_cap());
      break;
  }
  return dataset;
}

DatasetLabels load_labels(const DatasetSpec& spec) {
  if (format_of(spec.name) == Format::synthetic) {
    expect_compatible(spec.synthetic_train, spec.synthetic_test);
    return {synthetic_labels(spec.synthetic_train), spec.synthetic_train.num_classes, spec.synthetic_test.samples};
  }
  Dataset dataset = load_dataset(spec);
  return {std::move(dataset.train.labels), dataset.train.num_classes, dataset.test.size()};
}

}  // namespace cmlbed::data
