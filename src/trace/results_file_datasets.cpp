// Whole arrays: the final weights (/model/<name>), the per-rank process measures
// (/process/<name>) and reading any one-dimensional float64 dataset.
#include <stdexcept>

#include "cmlbed/trace/results_file.hpp"
#include "results_file_impl.hpp"

namespace cmlbed::trace {

using hdf5::quoted;

void ResultsFile::write_model(const std::string& name, const std::vector<float>& weights) {
  Impl& impl = open_impl();
  const hid_t file = impl.file.get();
  const std::string where = "'/model/" + name + "' in " + impl.where();
  if (!hdf5::check_bool(H5Lexists(file, "/model", H5P_DEFAULT), "H5Lexists(/model)")) {
    hdf5::owned<hdf5::GroupHandle>(H5Gcreate2(file, "/model", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                   "H5Gcreate2('/model' in " + impl.where() + ")");
  }
  const auto space = hdf5::vector_space(weights.size());
  const auto dataset = hdf5::owned<hdf5::DatasetHandle>(
      H5Dcreate2(file, ("/model/" + name).c_str(), H5T_IEEE_F32LE, space.get(), H5P_DEFAULT,
                 H5P_DEFAULT, H5P_DEFAULT),
      "H5Dcreate2(" + where + ")");
  hdf5::check(H5Dwrite(dataset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, weights.data()),
              "H5Dwrite(" + where + ")");
}

std::vector<float> ResultsFile::read_model(const std::string& path, const std::string& name) {
  const hdf5::FileHandle file = hdf5::open_read_only(path);
  const std::string where = "'/model/" + name + "' in " + quoted(path);
  return hdf5::read_whole_dataset<float>(file.get(), "/model/" + name, H5T_NATIVE_FLOAT, where);
}

void ResultsFile::write_process_measure(const std::string& name, const std::vector<double>& per_rank) {
  Impl& impl = open_impl();
  if (per_rank.size() != static_cast<std::size_t>(impl.mpi_size)) {
    throw std::invalid_argument("write_process_measure(" + quoted(name) + "): " +
                                std::to_string(per_rank.size()) + " values for " +
                                std::to_string(impl.mpi_size) + " ranks");
  }
  const hid_t file = impl.file.get();
  const std::string path = "/process/" + name;
  hdf5::ensure_group(file, "/process", impl.where());
  hdf5::replace_float64_dataset(file, path, per_rank, quoted(path) + " in " + impl.where());
}

std::vector<double> ResultsFile::read_process_measure(const std::string& path, const std::string& name) {
  return read_float64_dataset(path, "/process/" + name);
}

std::vector<double> ResultsFile::read_float64_dataset(const std::string& path, const std::string& name) {
  const hdf5::FileHandle file = hdf5::open_read_only(path);
  const std::string where = quoted(name) + " in " + quoted(path);
  return hdf5::read_whole_dataset<double>(file.get(), name, H5T_NATIVE_DOUBLE, where);
}

}  // namespace cmlbed::trace
