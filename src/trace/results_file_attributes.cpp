// Single values: the root attributes set during or after a run, and /summary's.
#include <cstdint>
#include <utility>

#include "cmlbed/trace/results_file.hpp"
#include "results_file_impl.hpp"

namespace cmlbed::trace {

using hdf5::quoted;
using hdf5::scalar_space;
using hdf5::write_attribute;
using hdf5::write_string_attribute;

void ResultsFile::set_summary(const std::vector<std::pair<std::string, double>>& values) {
  Impl& impl = open_impl();
  const std::string where = "'/summary' in " + impl.where();
  for (const auto& [name, value] : values) {
    write_attribute(impl.summary.get(), name, H5T_NATIVE_DOUBLE, scalar_space(), &value, where);
  }
}

void ResultsFile::mark_interrupted(const std::string& signal, int rounds_complete) {
  Impl& impl = open_impl();
  const hid_t file = impl.file.get();
  write_string_attribute(file, "interrupted", signal, impl.where());
  const std::int32_t complete = rounds_complete;
  write_attribute(file, "rounds_complete", H5T_NATIVE_INT32, scalar_space(), &complete, impl.where());
}

void ResultsFile::set_root_number(const std::string& name, double value) {
  Impl& impl = open_impl();
  write_attribute(impl.file.get(), name, H5T_NATIVE_DOUBLE, scalar_space(), &value, impl.where());
}

void ResultsFile::set_root_integer(const std::string& name, std::int32_t value) {
  Impl& impl = open_impl();
  write_attribute(impl.file.get(), name, H5T_NATIVE_INT32, scalar_space(), &value, impl.where());
}

void ResultsFile::set_root_text(const std::string& name, const std::string& value) {
  Impl& impl = open_impl();
  write_string_attribute(impl.file.get(), name, value, impl.where());
}

void ResultsFile::mark_simulated(const std::string& profile_json) {
  Impl& impl = open_impl();
  const hid_t file = impl.file.get();
  const std::int32_t simulated = 1;
  write_attribute(file, "simulated", H5T_NATIVE_INT32, scalar_space(), &simulated, impl.where());
  write_string_attribute(file, "profile", profile_json, impl.where());
}

int ResultsFile::read_mpi_size(const std::string& path) {
  const hdf5::FileHandle file = hdf5::open_read_only(path);
  std::int32_t size = 0;
  hdf5::read_attribute(file.get(), "mpi_size", H5T_NATIVE_INT32, &size, 1, quoted(path));
  return size;
}

std::string ResultsFile::read_string_attribute(const std::string& path, const std::string& name) {
  const hdf5::FileHandle file = hdf5::open_read_only(path);
  const std::string what = "attribute " + quoted(name) + " of '/' in " + quoted(path);
  const auto attribute = hdf5::owned<hdf5::AttributeHandle>(
      H5Aopen_by_name(file.get(), "/", name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
      "H5Aopen_by_name(" + what + ")");
  return hdf5::read_string_attribute(attribute.get(), what);
}

std::vector<std::pair<std::string, double>> ResultsFile::read_summary(const std::string& path) {
  const hdf5::FileHandle file = hdf5::open_read_only(path);
  const std::string where = "'/summary' in " + quoted(path);
  const auto summary = hdf5::owned<hdf5::GroupHandle>(H5Gopen2(file.get(), "/summary", H5P_DEFAULT),
                                                      "H5Gopen2(" + where + ")");
  std::vector<std::pair<std::string, double>> values;
  for (const std::string& name : hdf5::attribute_names(summary.get(), where)) {
    const std::string what = "attribute " + quoted(name) + " of " + where;
    const auto attribute = hdf5::owned<hdf5::AttributeHandle>(
        H5Aopen(summary.get(), name.c_str(), H5P_DEFAULT), "H5Aopen(" + what + ")");
    double value = 0;
    hdf5::check(H5Aread(attribute.get(), H5T_NATIVE_DOUBLE, &value), "H5Aread(" + what + ")");
    values.emplace_back(name, value);
  }
  return values;
}

}  // namespace cmlbed::trace
