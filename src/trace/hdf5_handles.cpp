#include "cmlbed/trace/hdf5_handles.hpp"

#include <string>
#include <vector>

namespace cmlbed::trace::hdf5 {
namespace {

// One frame of the error stack, copied out during the walk: the strings it points
// to belong to the stack, which the next HDF5 call may clear.
struct ErrorFrame {
  hid_t major = H5I_INVALID_HID;
  hid_t minor = H5I_INVALID_HID;
  unsigned line = 0;
  std::string function;
  std::string file;
  std::string description;
};

herr_t collect_frame(unsigned /*depth*/, const H5E_error2_t* error, void* frames) {
  static_cast<std::vector<ErrorFrame>*>(frames)->push_back(ErrorFrame{
      error->maj_num, error->min_num, error->line, error->func_name ? error->func_name : "",
      error->file_name ? error->file_name : "", error->desc ? error->desc : ""});
  return 0;
}

// The text of a major or minor error class ("File accessibility"), or "" when
// HDF5 cannot say.
std::string message_text(hid_t message_id) {
  H5E_type_t type;
  const ssize_t length = H5Eget_msg(message_id, &type, nullptr, 0);
  if (length <= 0) return {};
  std::string text(static_cast<std::size_t>(length) + 1, '\0');
  if (H5Eget_msg(message_id, &type, text.data(), text.size()) < 0) return {};
  text.resize(static_cast<std::size_t>(length));
  return text;
}

}  // namespace

void silence_error_printing() {
  thread_local bool silenced = false;
  if (silenced) return;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  silenced = true;
}

std::string take_error_stack() {
  std::vector<ErrorFrame> frames;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_frame, &frames);
  std::string text;
  for (const ErrorFrame& frame : frames) {
    if (!text.empty()) text += '\n';
    text += "  " + frame.function + "() in " + frame.file + ":" + std::to_string(frame.line) +
            ": " + frame.description;
    const std::string major = message_text(frame.major);
    const std::string minor = message_text(frame.minor);
    if (!major.empty() || !minor.empty()) text += " (" + major + ": " + minor + ")";
  }
  H5Eclear2(H5E_DEFAULT);
  return text;
}

void throw_error(const std::string& attempted) {
  const std::string stack = take_error_stack();
  if (stack.empty()) throw Hdf5Error(attempted + " failed (HDF5 left no error stack)");
  throw Hdf5Error(attempted + " failed; HDF5 error stack:\n" + stack);
}

DatatypeHandle make_string_type() {
  auto type = owned<DatatypeHandle>(H5Tcopy(H5T_C_S1), "H5Tcopy(H5T_C_S1)");
  check(H5Tset_size(type.get(), H5T_VARIABLE), "H5Tset_size(variable-length string)");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset(UTF-8)");
  return type;
}

std::string read_string_attribute(hid_t attribute, const std::string& what) {
  const auto file_type = owned<DatatypeHandle>(H5Aget_type(attribute), "H5Aget_type(" + what + ")");
  const auto space = owned<DataspaceHandle>(H5Aget_space(attribute), "H5Aget_space(" + what + ")");
  if (H5Tget_class(file_type.get()) != H5T_STRING ||
      H5Sget_simple_extent_npoints(space.get()) != 1) {
    throw Hdf5Error(what + " is not a single string");
  }
  if (check_bool(H5Tis_variable_str(file_type.get()), "H5Tis_variable_str(" + what + ")")) {
    const DatatypeHandle memory_type = make_string_type();
    char* text = nullptr;
    check(H5Aread(attribute, memory_type.get(), &text), "H5Aread(" + what + ")");
    std::string value = text ? text : "";
    H5free_memory(text);  // HDF5 allocated it
    return value;
  }
  // Fixed length: read with one byte more than stored, so the text always ends in a
  // NUL whatever the stored padding.
  const std::size_t size = H5Tget_size(file_type.get());
  auto memory_type = owned<DatatypeHandle>(H5Tcopy(H5T_C_S1), "H5Tcopy(H5T_C_S1)");
  check(H5Tset_size(memory_type.get(), size + 1), "H5Tset_size(" + what + ")");
  check(H5Tset_strpad(memory_type.get(), H5T_STR_NULLTERM), "H5Tset_strpad(" + what + ")");
  std::string buffer(size + 1, '\0');
  check(H5Aread(attribute, memory_type.get(), buffer.data()), "H5Aread(" + what + ")");
  buffer.resize(std::char_traits<char>::length(buffer.c_str()));
  return buffer;
}

DataspaceHandle scalar_space() {
  return owned<DataspaceHandle>(H5Screate(H5S_SCALAR), "H5Screate(scalar)");
}

DataspaceHandle vector_space(hsize_t length) {
  return owned<DataspaceHandle>(H5Screate_simple(1, &length, nullptr), "H5Screate_simple");
}

namespace {
std::string attribute_what(const std::string& name, const std::string& where) {
  return "attribute '" + name + "' of " + where;
}
}  // namespace

void write_attribute(hid_t owner, const std::string& name, hid_t type, const DataspaceHandle& space,
                     const void* data, const std::string& where) {
  const std::string what = attribute_what(name, where);
  delete_attribute_if_present(owner, name, where);
  auto attribute = owned<AttributeHandle>(
      H5Acreate2(owner, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
      "H5Acreate2(" + what + ")");
  check(H5Awrite(attribute.get(), type, data), "H5Awrite(" + what + ")");
}

void write_string_attribute(hid_t owner, const std::string& name, const std::string& value,
                            const std::string& where) {
  const DatatypeHandle type = make_string_type();
  const char* pointer = value.c_str();
  write_attribute(owner, name, type.get(), scalar_space(), &pointer, where);
}

bool has_attribute(hid_t owner, const std::string& name, const std::string& where) {
  return check_bool(H5Aexists(owner, name.c_str()), "H5Aexists(" + attribute_what(name, where) + ")");
}

void delete_attribute_if_present(hid_t owner, const std::string& name, const std::string& where) {
  if (!has_attribute(owner, name, where)) return;
  check(H5Adelete(owner, name.c_str()), "H5Adelete(" + attribute_what(name, where) + ")");
}

std::size_t attribute_elements(hid_t owner, const std::string& name, const std::string& where) {
  const std::string what = attribute_what(name, where);
  const auto attribute =
      owned<AttributeHandle>(H5Aopen(owner, name.c_str(), H5P_DEFAULT), "H5Aopen(" + what + ")");
  const auto space = owned<DataspaceHandle>(H5Aget_space(attribute.get()), "H5Aget_space(" + what + ")");
  const hssize_t elements = H5Sget_simple_extent_npoints(space.get());
  if (elements < 0) throw_error("H5Sget_simple_extent_npoints(" + what + ")");
  return static_cast<std::size_t>(elements);
}

void read_attribute(hid_t owner, const std::string& name, hid_t memory_type, void* out,
                    std::size_t count, const std::string& where) {
  const std::string what = attribute_what(name, where);
  const std::size_t stored = attribute_elements(owner, name, where);
  if (stored != count) {
    throw Hdf5Error(what + " holds " + std::to_string(stored) + " value(s), expected " +
                    std::to_string(count));
  }
  const auto attribute =
      owned<AttributeHandle>(H5Aopen(owner, name.c_str(), H5P_DEFAULT), "H5Aopen(" + what + ")");
  check(H5Aread(attribute.get(), memory_type, out), "H5Aread(" + what + ")");
}

std::string read_string_attribute(hid_t owner, const std::string& name, const std::string& where) {
  const std::string what = attribute_what(name, where);
  const auto attribute =
      owned<AttributeHandle>(H5Aopen(owner, name.c_str(), H5P_DEFAULT), "H5Aopen(" + what + ")");
  return read_string_attribute(attribute.get(), what);
}

}  // namespace cmlbed::trace::hdf5
