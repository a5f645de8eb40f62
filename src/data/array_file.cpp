#include "cmlbed/data/array_file.hpp"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <optional>

#include "array_source.hpp"
#include "cmlbed/data/data_error.hpp"
#include "cmlbed/trace/hdf5_handles.hpp"

namespace cmlbed::data {
namespace {

constexpr const char* kSplits[] = {"train", "test"};
constexpr std::uint64_t kMaxSide = 1 << 16;
constexpr std::int64_t kMaxClasses = 256;  // ImageSet's labels are bytes

std::string gib(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / double(1ULL << 30));
  return text;
}

using Normalisation = std::pair<std::vector<float>, std::vector<float>>;  // mean, std

// What the checks read besides the shapes, kept so that reading the data set does not
// read it again: each split's labels (train, test) and the normalisation, if any.
struct CheckedFile {
  ArrayFileSummary summary;
  std::vector<std::uint8_t> labels[2];
  std::optional<Normalisation> normalisation;
};

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "nothing" : text;
}

class ArrayFile {
 public:
  ArrayFile(std::string path, std::uint64_t memory_cap)
      : path_(std::move(path)), memory_cap_(memory_cap), source_(open_array_source(path_)) {}

  const std::string& path() const { return path_; }
  const ArraySource& source() const { return *source_; }

  ArrayHeader required(const std::string& name) const {
    std::optional<ArrayHeader> header = source_->header(name);
    if (!header) {
      fail("no array '" + name + "' (the file holds: " + joined(source_->names()) +
           "); it needs train_images, train_labels, test_images and test_labels");
    }
    return *header;
  }

  std::optional<ArrayHeader> optional(const std::string& name) const { return source_->header(name); }

  CheckedFile check() const {
    CheckedFile checked;
    ArrayFileSummary& summary = checked.summary;
    std::optional<ArrayHeader> first_images;
    for (const char* split : kSplits) {
      const std::string images_name = std::string(split) + "_images", labels_name = std::string(split) + "_labels";
      ArrayHeader images = required(images_name);
      const ArrayHeader labels = required(labels_name);
      if (images.type != ElementType::uint8 && images.type != ElementType::float32) {
        fail(images_name + " is a " + images.describe() + "; images must be uint8 or float32");
      }
      if (images.shape.size() == 3) images.shape.insert(images.shape.begin() + 1, 1);  // N x H x W: one channel
      if (images.shape.size() != 4) {
        fail(images_name + " is a " + images.describe() + "; images must be N x C x H x W or N x H x W");
      }
      for (std::size_t d = 1; d < 4; ++d) {
        if (images.shape[d] == 0 || images.shape[d] > kMaxSide) {
          fail(images_name + " is a " + images.describe() + "; each of C, H and W must be 1.." +
               std::to_string(kMaxSide));
        }
      }
      if (!is_integer(labels.type) || labels.shape.size() != 1) {
        fail(labels_name + " is a " + labels.describe() + "; labels must be one integer per sample");
      }
      if (images.shape[0] == 0) fail(images_name + " holds no samples: the " + split + " split is empty");
      if (labels.shape[0] != images.shape[0]) {
        fail(labels_name + " holds " + std::to_string(labels.shape[0]) + " labels but " + images_name + " " +
             std::to_string(images.shape[0]) + " images");
      }
      if (first_images) {
        if (images.type != first_images->type ||
            !std::equal(images.shape.begin() + 1, images.shape.end(), first_images->shape.begin() + 1)) {
          fail("test_images is a " + images.describe() + " but train_images a " + first_images->describe() +
               "; both must have the same type and sample shape");
        }
      } else {
        first_images = images;
      }
      (std::string(split) == "train" ? summary.train_samples : summary.test_samples) = images.shape[0];
      summary.memory_bytes += images.bytes() + images.shape[0];  // pixels, and labels as bytes
    }
    summary.image_type = first_images->type;
    summary.channels = static_cast<std::int64_t>(first_images->shape[1]);
    summary.height = static_cast<std::int64_t>(first_images->shape[2]);
    summary.width = static_cast<std::int64_t>(first_images->shape[3]);
    if (summary.memory_bytes > memory_cap_) {
      fail("the data set takes " + gib(summary.memory_bytes) + " in memory, more than the cap of " +
           gib(memory_cap_) + " (half of this machine's memory); use a smaller file");
    }
    for (std::size_t s = 0; s < 2; ++s) {
      checked.labels[s] = labels(std::string(kSplits[s]) + "_labels");
      for (const std::uint8_t label : checked.labels[s]) {
        summary.num_classes = std::max<std::int64_t>(summary.num_classes, label + 1);
      }
    }
    checked.normalisation = normalisation(summary.channels);
    summary.normalised = checked.normalisation.has_value();
    return checked;
  }

  // The labels as bytes, each checked to be 0..255.
  std::vector<std::uint8_t> labels(const std::string& name) const {
    const NumericArray array = source_->read(name);
    std::vector<std::uint8_t> labels(array.header.elements());
    for (std::uint64_t i = 0; i < labels.size(); ++i) {
      const std::int64_t label = array.integer_at(i);
      if (label < 0 || label >= kMaxClasses) {
        fail(name + "[" + std::to_string(i) + "] is " + std::to_string(label) + "; labels must be 0..K-1 with K <= " +
             std::to_string(kMaxClasses) + " classes");
      }
      labels[i] = static_cast<std::uint8_t>(label);
    }
    return labels;
  }

  // mean and std, both or neither, one value per channel, std > 0.
  std::optional<Normalisation> normalisation(std::int64_t channels) const {
    const std::optional<ArrayHeader> mean = optional("mean"), std_dev = optional("std");
    if (!mean && !std_dev) return std::nullopt;
    if (!mean || !std_dev) fail(std::string("has '") + (mean ? "mean" : "std") + "' without '" + (mean ? "std" : "mean") + "'; give both or neither");
    Normalisation values;
    for (const auto& [name, header, out] :
         {std::tuple{"mean", *mean, &values.first}, std::tuple{"std", *std_dev, &values.second}}) {
      if (header.elements() != static_cast<std::uint64_t>(channels) || header.shape.size() > 1) {
        fail(std::string(name) + " is a " + header.describe() + "; it must hold one value per channel (" +
             std::to_string(channels) + ")");
      }
      const NumericArray array = source_->read(name);
      for (std::uint64_t c = 0; c < array.header.elements(); ++c) {
        const double value = array.real_at(c);
        if (!std::isfinite(value) || (std::string(name) == "std" && value <= 0)) {
          fail(std::string(name) + "[" + std::to_string(c) + "] is " + std::to_string(value) + "; it must be finite" +
               (std::string(name) == "std" ? " and above 0" : ""));
        }
        out->push_back(static_cast<float>(value));
      }
    }
    return values;
  }

  [[noreturn]] void fail(const std::string& problem) const { throw DataError(path_, problem); }

 private:
  std::string path_;
  std::uint64_t memory_cap_;
  std::unique_ptr<ArraySource> source_;
};

// One split's images, with the labels and normalisation the checks read.
ImageSet read_split(const ArrayFile& file, CheckedFile& checked, std::size_t split_index) {
  const ArrayFileSummary& summary = checked.summary;
  const std::string split = kSplits[split_index];
  ImageSet set;
  set.channels = summary.channels;
  set.height = summary.height;
  set.width = summary.width;
  set.num_classes = summary.num_classes;
  set.pixel_type = summary.image_type == ElementType::float32 ? PixelType::float32 : PixelType::uint8;
  set.labels = std::move(checked.labels[split_index]);
  if (checked.normalisation) {
    set.channel_mean = checked.normalisation->first;
    set.channel_std = checked.normalisation->second;
  }
  NumericArray images = file.source().read(split + "_images");
  if (set.pixel_type == PixelType::float32) {
    for (std::uint64_t i = 0; i < images.header.elements(); ++i) {
      float value;
      std::memcpy(&value, images.bytes.data() + 4 * i, 4);
      if (!std::isfinite(value)) {
        const std::uint64_t per_sample = images.header.elements() / set.labels.size();
        file.fail(split + "_images holds a NaN or an infinity in sample " + std::to_string(i / per_sample) +
                  "; images must be finite");
      }
    }
  }
  set.pixels = std::move(images.bytes);
  return set;
}

}  // namespace

std::unique_ptr<ArraySource> open_array_source(const std::string& path) {
  const auto ends_with = [&](const char* suffix) {
    const std::size_t n = std::strlen(suffix);
    return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
  };
  if (ends_with(".npz")) return open_npz(path);
  if (ends_with(".h5") || ends_with(".hdf5")) return open_hdf5_arrays(path);
  throw DataError(path, "data.file must end in .npz (numpy.savez) or .h5 / .hdf5 (HDF5)");
}

std::uint64_t default_array_memory_cap() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::uint64_t{4} << 30;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) / 2;
}

ArrayFileSummary inspect_array_file(const std::string& path, std::uint64_t memory_cap) {
  try {
    return ArrayFile(path, memory_cap).check().summary;
  } catch (const trace::Hdf5Error& e) {
    throw DataError(path, e.what());
  }
}

Dataset read_array_file(const std::string& path, std::uint64_t memory_cap) {
  try {
    const ArrayFile file(path, memory_cap);
    CheckedFile checked = file.check();
    Dataset dataset;
    dataset.train = read_split(file, checked, 0);
    dataset.test = read_split(file, checked, 1);
    return dataset;
  } catch (const trace::Hdf5Error& e) {
    throw DataError(path, e.what());
  }
}

}  // namespace cmlbed::data
