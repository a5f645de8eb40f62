#pragma once
// Owning wrappers for HDF5 identifiers and checked calls, for the results file.
// Every HDF5 call's result goes through check() / check_id() / owned<>(): a failure
// becomes an Hdf5Error whose message says what was attempted followed by HDF5's own
// error stack, and HDF5's automatic printing to stderr is switched off so that the
// caller decides what reaches the user. Plain C API (the C++ API is not installed
// everywhere and its exceptions carry less).
#include <hdf5.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace cmlbed::trace {

class Hdf5Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace hdf5 {

// Switches off HDF5's printing of error stacks to stderr for the calling thread
// (this HDF5 build is thread-safe, which makes the setting per thread). Cheap after
// the first call on a thread; every entry point of the results file calls it.
void silence_error_printing();

// HDF5's current error stack (H5E_DEFAULT), innermost call first, one frame per
// line: "H5Fopen() in H5F.c:509: unable to open file (File accessibility: ...)".
// Empty when the stack holds nothing. Clears the stack.
std::string take_error_stack();

// Throws Hdf5Error("<attempted> failed: <error stack>").
[[noreturn]] void throw_error(const std::string& attempted);

// HDF5 reports failure as a negative herr_t, hid_t or htri_t.
inline herr_t check(herr_t status, const std::string& attempted) {
  if (status < 0) throw_error(attempted);
  return status;
}
inline hid_t check_id(hid_t id, const std::string& attempted) {
  if (id < 0) throw_error(attempted);
  return id;
}
inline bool check_bool(htri_t answer, const std::string& attempted) {
  if (answer < 0) throw_error(attempted);
  return answer > 0;
}

// Move-only owner of one identifier, closed with the H5*close of its kind. A close
// that fails in the destructor is ignored (destructors must not throw); call close()
// where the failure matters, e.g. for a file, whose close writes data.
template <herr_t (*CloseFunction)(hid_t)>
class Handle {
 public:
  Handle() noexcept = default;
  explicit Handle(hid_t id) noexcept : id_(id) {}
  ~Handle() { reset(); }

  Handle(Handle&& other) noexcept : id_(other.release()) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = other.release();
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hid_t get() const noexcept { return id_; }
  explicit operator bool() const noexcept { return id_ >= 0; }

  hid_t release() noexcept { return std::exchange(id_, H5I_INVALID_HID); }

  void reset() noexcept {
    if (id_ >= 0) CloseFunction(id_);
    id_ = H5I_INVALID_HID;
  }

  // Closes now; throws Hdf5Error when HDF5 reports a failure.
  void close(const std::string& attempted) {
    const hid_t id = release();
    if (id >= 0) check(CloseFunction(id), attempted);
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

using FileHandle = Handle<H5Fclose>;
using GroupHandle = Handle<H5Gclose>;
using DatasetHandle = Handle<H5Dclose>;
using DataspaceHandle = Handle<H5Sclose>;
using DatatypeHandle = Handle<H5Tclose>;  // only for types made by H5Tcopy / H5T*create
using AttributeHandle = Handle<H5Aclose>;
using PropertyListHandle = Handle<H5Pclose>;

// Checks a freshly returned identifier and takes ownership of it:
//   auto group = owned<GroupHandle>(H5Gopen2(file, "/ranks", H5P_DEFAULT), "open /ranks");
template <typename HandleType>
HandleType owned(hid_t id, const std::string& attempted) {
  return HandleType(check_id(id, attempted));
}

// A variable-length UTF-8 string type: h5py reads such attributes as str.
DatatypeHandle make_string_type();

// The value of a scalar string attribute, fixed- or variable-length; throws
// Hdf5Error when the attribute holds something else. `what` names it in messages.
std::string read_string_attribute(hid_t attribute, const std::string& what);

// Dataspaces of one value and of a one-dimensional array.
DataspaceHandle scalar_space();
DataspaceHandle vector_space(hsize_t length);

// Attributes of `owner` (a file, group or dataset); `where` names the owner in messages.
// write_attribute creates or replaces attribute `name` and writes `data`, whose memory
// layout is `type`; the file stores the same type.
void write_attribute(hid_t owner, const std::string& name, hid_t type, const DataspaceHandle& space,
                     const void* data, const std::string& where);
void write_string_attribute(hid_t owner, const std::string& name, const std::string& value,
                            const std::string& where);
bool has_attribute(hid_t owner, const std::string& name, const std::string& where);
void delete_attribute_if_present(hid_t owner, const std::string& name, const std::string& where);
// Number of elements of attribute `name` (1 for a scalar).
std::size_t attribute_elements(hid_t owner, const std::string& name, const std::string& where);
// Reads attribute `name` into `count` elements of `memory_type` at `out` (HDF5 converts
// numbers); throws Hdf5Error when it does not hold exactly `count` elements.
void read_attribute(hid_t owner, const std::string& name, hid_t memory_type, void* out,
                    std::size_t count, const std::string& where);
// A scalar string attribute of `owner` by name.
std::string read_string_attribute(hid_t owner, const std::string& name, const std::string& where);

}  // namespace hdf5
}  // namespace cmlbed::trace
