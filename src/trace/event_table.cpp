#include "event_table.hpp"

#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <variant>
#include <vector>

#include "cmlbed/trace/event_columns.hpp"
#include "hdf5_tables.hpp"

namespace cmlbed::trace {
namespace {

using hdf5::check;
using hdf5::DatatypeHandle;
using hdf5::owned;

static_assert(sizeof(Lane) == 1 && sizeof(EventKind) == 1 && sizeof(MessageType) == 1 && sizeof(Held) == 1,
              "lane, kind, message and held are stored as HDF5 enums based on uint8");

hid_t native_integer_type(const EventColumn& column) {
  return std::holds_alternative<EventColumn::Int64>(column.field) ? H5T_NATIVE_INT64
                                                                   : H5T_NATIVE_INT32;
}

// The stored value of an enum member, for validate_event.
std::size_t enum_value(const Event& event, const EventColumn& column) {
  return std::visit(
      [&](auto member) { return static_cast<std::size_t>(event.*member); }, column.field);
}

// The enum members, picked once: validate_event runs for every event appended.
const std::vector<const EventColumn*>& enum_columns() {
  static const std::vector<const EventColumn*> columns = [] {
    std::vector<const EventColumn*> picked;
    for (const EventColumn& column : event_columns()) {
      if (column.enum_names() != nullptr) picked.push_back(&column);
    }
    return picked;
  }();
  return columns;
}

}  // namespace

// An enum over uint8 whose member names are `names` in value order, so that h5py and
// h5dump show "forward" rather than 0.
DatatypeHandle make_enum_type(const char* what, const std::vector<std::string>& names) {
  auto type = owned<DatatypeHandle>(H5Tenum_create(H5T_NATIVE_UINT8),
                                    std::string("H5Tenum_create(") + what + ")");
  for (std::size_t value = 0; value < names.size(); ++value) {
    const auto stored = static_cast<std::uint8_t>(value);
    check(H5Tenum_insert(type.get(), names[value].c_str(), &stored),
          std::string("H5Tenum_insert(") + what + ", " + hdf5::quoted(names[value]) + ")");
  }
  return type;
}

std::string rank_group_name(int rank) { return "/ranks/" + std::to_string(rank); }
std::string events_dataset_name(int rank) { return rank_group_name(rank) + "/events"; }

DatatypeHandle make_event_memory_type() {
  auto type =
      owned<DatatypeHandle>(H5Tcreate(H5T_COMPOUND, sizeof(Event)), "H5Tcreate(event compound)");
  for (const EventColumn& column : event_columns()) {
    const std::vector<std::string>* names = column.enum_names();
    if (names == nullptr) {
      hdf5::insert_member(type.get(), column.name, column.offset(), native_integer_type(column));
      continue;
    }
    const DatatypeHandle member = make_enum_type(column.name, *names);
    hdf5::insert_member(type.get(), column.name, column.offset(), member.get());  // copies it
  }
  return type;
}

DatatypeHandle make_event_file_type() {
  DatatypeHandle type = make_event_memory_type();
  check(H5Tpack(type.get()), "H5Tpack(event compound)");
  return type;
}

void validate_event(const Event& event) {
  for (const EventColumn* column : enum_columns()) {
    const std::size_t value = enum_value(event, *column);
    if (value >= column->enum_names()->size()) {
      throw std::invalid_argument(std::string("results file: event with unknown ") + column->name +
                                  " value " + std::to_string(value));
    }
  }
}

}  // namespace cmlbed::trace
