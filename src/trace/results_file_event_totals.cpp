// /event_totals: events summed per rank, round, lane, kind and message, in a file made with
// event_detail = totals (trace/event_totals.hpp).
#include <cstddef>
#include <stdexcept>

#include "cmlbed/trace/results_file.hpp"
#include "event_table.hpp"
#include "results_file_impl.hpp"

namespace cmlbed::trace {
namespace {

using hdf5::DatatypeHandle;
using hdf5::owned;

// The layout of EventTotal in memory; `packed`: without padding, as stored.
DatatypeHandle make_event_total_type(bool packed) {
  auto type = owned<DatatypeHandle>(H5Tcreate(H5T_COMPOUND, sizeof(EventTotal)), "H5Tcreate(event total compound)");
  const DatatypeHandle lane = make_enum_type("lane", lane_names());
  const DatatypeHandle kind = make_enum_type("kind", event_kind_names());
  const DatatypeHandle message = make_enum_type("message", message_type_names());
  hdf5::insert_member(type.get(), "rank", offsetof(EventTotal, rank), H5T_NATIVE_INT32);
  hdf5::insert_member(type.get(), "round", offsetof(EventTotal, round), H5T_NATIVE_INT32);
  hdf5::insert_member(type.get(), "lane", offsetof(EventTotal, lane), lane.get());
  hdf5::insert_member(type.get(), "kind", offsetof(EventTotal, kind), kind.get());
  hdf5::insert_member(type.get(), "message", offsetof(EventTotal, message), message.get());
  hdf5::insert_member(type.get(), "count", offsetof(EventTotal, count), H5T_NATIVE_INT64);
  hdf5::insert_member(type.get(), "bytes", offsetof(EventTotal, bytes), H5T_NATIVE_INT64);
  hdf5::insert_member(type.get(), "seconds", offsetof(EventTotal, seconds), H5T_NATIVE_DOUBLE);
  if (packed) hdf5::check(H5Tpack(type.get()), "H5Tpack(event total compound)");
  return type;
}

}  // namespace

hdf5::DatasetHandle create_event_totals_table(hid_t file, const std::string& where) {
  const DatatypeHandle stored = make_event_total_type(/*packed=*/true);
  return hdf5::create_table(file, kEventTotalsTable, stored.get(), kEventChunkRows, where);
}

void ResultsFile::append_event_totals(const std::vector<EventTotal>& totals) {
  Impl& impl = open_impl();
  if (impl.event_detail != EventDetail::totals) {
    throw std::logic_error("results file " + impl.where() + " keeps every event: append_events, not totals");
  }
  if (totals.empty()) return;
  const DatatypeHandle memory = make_event_total_type(/*packed=*/false);
  hdf5::append_rows(impl.event_totals.get(), impl.event_total_rows, totals.size(), memory.get(), totals.data(),
                    hdf5::quoted(kEventTotalsTable) + " in " + impl.where());
}

}  // namespace cmlbed::trace
