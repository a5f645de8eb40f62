// Tables and attributes whose schema a feature declares next to itself (the planner's
// /plan, the re-planner's /plan/replans): trace writes float64 columns and scalar
// attributes of a group, and knows nothing of what they mean.
#include <cstdint>

#include "cmlbed/trace/results_file.hpp"
#include "results_file_impl.hpp"

namespace cmlbed::trace {
namespace {

// `group` and each group above it, created where missing.
void ensure_groups(hid_t file, const std::string& group, const std::string& file_where) {
  for (std::size_t slash = group.find('/', 1); slash != std::string::npos; slash = group.find('/', slash + 1)) {
    hdf5::ensure_group(file, group.substr(0, slash), file_where);
  }
  hdf5::ensure_group(file, group, file_where);
}

template <typename Impl, typename Write>
void with_group(Impl& impl, const std::string& group, const Write& write) {
  const hid_t file = impl.file.get();
  ensure_groups(file, group, impl.where());
  const std::string where = hdf5::quoted(group) + " in " + impl.where();
  const auto handle = hdf5::owned<hdf5::GroupHandle>(H5Gopen2(file, group.c_str(), H5P_DEFAULT),
                                                     "H5Gopen2(" + where + ")");
  write(handle.get(), where);
}

}  // namespace

void ResultsFile::write_float64_column(const std::string& group, const std::string& name,
                                       const std::vector<double>& values) {
  Impl& impl = open_impl();
  const hid_t file = impl.file.get();
  ensure_groups(file, group, impl.where());
  const std::string path = group + "/" + name;
  hdf5::replace_float64_dataset(file, path, values, hdf5::quoted(path) + " in " + impl.where());
}

void ResultsFile::set_group_integer(const std::string& group, const std::string& name, std::int32_t value) {
  with_group(open_impl(), group, [&](hid_t handle, const std::string& where) {
    hdf5::write_attribute(handle, name, H5T_NATIVE_INT32, hdf5::scalar_space(), &value, where);
  });
}

void ResultsFile::set_group_number(const std::string& group, const std::string& name, double value) {
  with_group(open_impl(), group, [&](hid_t handle, const std::string& where) {
    hdf5::write_attribute(handle, name, H5T_NATIVE_DOUBLE, hdf5::scalar_space(), &value, where);
  });
}

void ResultsFile::set_group_text(const std::string& group, const std::string& name, const std::string& value) {
  with_group(open_impl(), group,
             [&](hid_t handle, const std::string& where) { hdf5::write_string_attribute(handle, name, value, where); });
}

}  // namespace cmlbed::trace
