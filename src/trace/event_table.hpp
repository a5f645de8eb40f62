#pragma once
// The HDF5 side of the /ranks/<r>/events tables: their row types, derived from
// event_columns(), where they lie and what an event must hold to be stored.
#include <string>
#include <vector>

#include "cmlbed/trace/event.hpp"
#include "cmlbed/trace/hdf5_handles.hpp"

namespace cmlbed::trace {

// 4096 packed events (44 bytes each) are 176 KiB: well inside HDF5's default 1 MiB
// chunk cache, and few chunks even for long runs.
constexpr hsize_t kEventChunkRows = 4096;

std::string rank_group_name(int rank);      // "/ranks/<rank>"
std::string events_dataset_name(int rank);  // "/ranks/<rank>/events"

// The layout of trace::Event in memory, padding included. HDF5 converts to and from the
// file type by member name, so readers and writers agree as long as the names do.
hdf5::DatatypeHandle make_event_memory_type();
// The same members without padding: 43 bytes a row in the file instead of 48.
hdf5::DatatypeHandle make_event_file_type();

// An enum over uint8 whose member names are `names` in value order.
hdf5::DatatypeHandle make_enum_type(const char* what, const std::vector<std::string>& names);

// Throws std::invalid_argument for a lane / kind / message value that has no name.
void validate_event(const Event& event);

}  // namespace cmlbed::trace
