// The arrays of an HDF5 file: one dataset per array, at the file's root (as
// h5py.File(path, "w")["train_images"] = array writes them).
#include <hdf5.h>

#include "array_source.hpp"
#include "cmlbed/data/data_error.hpp"
#include "cmlbed/trace/hdf5_handles.hpp"

namespace cmlbed::data {
namespace {

namespace h5 = trace::hdf5;

hid_t memory_type(ElementType type) {
  switch (type) {
    case ElementType::uint8: return H5T_NATIVE_UINT8;
    case ElementType::int8: return H5T_NATIVE_INT8;
    case ElementType::uint16: return H5T_NATIVE_UINT16;
    case ElementType::int16: return H5T_NATIVE_INT16;
    case ElementType::uint32: return H5T_NATIVE_UINT32;
    case ElementType::int32: return H5T_NATIVE_INT32;
    case ElementType::uint64: return H5T_NATIVE_UINT64;
    case ElementType::int64: return H5T_NATIVE_INT64;
    case ElementType::float32: return H5T_NATIVE_FLOAT;
    case ElementType::float64: return H5T_NATIVE_DOUBLE;
  }
  return H5T_NATIVE_UINT8;
}

class Hdf5Source : public ArraySource {
 public:
  explicit Hdf5Source(std::string path) : path_(std::move(path)) {
    h5::silence_error_printing();
    const htri_t is_hdf5 = H5Fis_hdf5(path_.c_str());
    if (is_hdf5 <= 0) {
      h5::take_error_stack();
      throw DataError(path_, "not an HDF5 file (or it cannot be read)");
    }
    file_ = h5::owned<h5::FileHandle>(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "open " + path_);
  }

  std::vector<std::string> names() const override {
    std::vector<std::string> names;
    H5Literate(file_.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr,
                [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
                  static_cast<std::vector<std::string>*>(out)->push_back(name);
                  return 0;
                },
                &names);
    h5::take_error_stack();
    return names;
  }

  std::optional<ArrayHeader> header(const std::string& name) const override {
    h5::silence_error_printing();
    if (!h5::check_bool(H5Lexists(file_.get(), name.c_str(), H5P_DEFAULT), where(name) + ": look up")) {
      return std::nullopt;
    }
    const h5::DatasetHandle dataset = open(name);
    return header_of(dataset.get(), name);
  }

  NumericArray read(const std::string& name) const override {
    const h5::DatasetHandle dataset = open(name);
    NumericArray array;
    array.header = header_of(dataset.get(), name);
    array.bytes.resize(static_cast<std::size_t>(array.header.bytes()));
    if (!array.bytes.empty()) {
      h5::check(H5Dread(dataset.get(), memory_type(array.header.type), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                        array.bytes.data()),
                "read " + where(name));
    }
    return array;
  }

 private:
  std::string where(const std::string& name) const { return path_ + ":" + name; }

  h5::DatasetHandle open(const std::string& name) const {
    h5::silence_error_printing();
    try {
      return h5::owned<h5::DatasetHandle>(H5Dopen2(file_.get(), name.c_str(), H5P_DEFAULT), "open");
    } catch (const trace::Hdf5Error&) {
      throw DataError(where(name), "is not a dataset (an array) of the file");
    }
  }

  ArrayHeader header_of(hid_t dataset, const std::string& name) const {
    const h5::DataspaceHandle space = h5::owned<h5::DataspaceHandle>(H5Dget_space(dataset), "its dataspace");
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0 || rank > 8) {
      throw DataError(where(name), "has " + std::to_string(rank) + " dimensions, expected 1 to 4");
    }
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    h5::check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), "read " + where(name) + "'s shape");
    ArrayHeader header;
    header.shape.assign(dims.begin(), dims.end());
    const h5::DatatypeHandle type = h5::owned<h5::DatatypeHandle>(H5Dget_type(dataset), "its type");
    const H5T_class_t type_class = H5Tget_class(type.get());
    const std::size_t size = H5Tget_size(type.get());
    if (type_class == H5T_INTEGER && (size == 1 || size == 2 || size == 4 || size == 8)) {
      const bool is_signed = H5Tget_sign(type.get()) == H5T_SGN_2;
      static const ElementType kUnsigned[] = {ElementType::uint8, ElementType::uint16, ElementType::uint32,
                                              ElementType::uint64};
      static const ElementType kSigned[] = {ElementType::int8, ElementType::int16, ElementType::int32,
                                            ElementType::int64};
      const std::size_t index = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
      header.type = is_signed ? kSigned[index] : kUnsigned[index];
    } else if (type_class == H5T_FLOAT && (size == 4 || size == 8)) {
      header.type = size == 4 ? ElementType::float32 : ElementType::float64;
    } else {
      throw DataError(where(name), "holds elements of a type that is not supported (not an integer or a "
                                   "32/64-bit float); save images as uint8 or float32 and labels as integers");
    }
    return header;
  }

  std::string path_;
  h5::FileHandle file_;
};

}  // namespace

std::unique_ptr<ArraySource> open_hdf5_arrays(const std::string& path) {
  try {
    return std::make_unique<Hdf5Source>(path);
  } catch (const trace::Hdf5Error& e) {
    throw DataError(path, e.what());
  }
}

}  // namespace cmlbed::data
