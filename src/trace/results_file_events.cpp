// /ranks/<r>/events: every rank's timeline, appended at round boundaries.
#include <stdexcept>

#include "cmlbed/trace/results_file.hpp"
#include "event_table.hpp"
#include "results_file_impl.hpp"

namespace cmlbed::trace {

using hdf5::quoted;

void ResultsFile::append_events(int rank, const std::vector<Event>& events) {
  Impl& impl = open_impl();
  if (impl.event_detail != EventDetail::all) {
    throw std::logic_error("results file " + impl.where() + " keeps event totals: append_event_totals, not events");
  }
  if (rank < 0 || rank >= impl.mpi_size) {
    throw std::invalid_argument("results file: events for rank " + std::to_string(rank) +
                                ", expected 0.." + std::to_string(impl.mpi_size - 1));
  }
  for (const Event& event : events) validate_event(event);
  if (events.empty()) return;
  const auto index = static_cast<std::size_t>(rank);
  hdf5::append_rows(impl.events[index].get(), impl.event_rows[index], events.size(),
                    impl.event_memory_type.get(), events.data(),
                    quoted(events_dataset_name(rank)) + " in " + impl.where());
}

std::vector<Event> ResultsFile::read_events(const std::string& path, int rank) {
  const hdf5::FileHandle file = hdf5::open_read_only(path);
  const std::string name = events_dataset_name(rank);
  const std::string what = quoted(name) + " in " + quoted(path);
  const auto dataset = hdf5::owned<hdf5::DatasetHandle>(
      H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT), "H5Dopen2(" + what + ")");
  // A file written before events named their message (or their held stages) has no
  // "message" (or "held") member. HDF5
  // converts compound rows by member name and leaves a member the file lacks as the
  // buffer holds it (the buffer is the conversion's background), so such events read
  // with the default-constructed message, none (held: no); a test reads such a file.
  std::vector<Event> events(hdf5::row_count(dataset.get(), what));
  if (events.empty()) return events;
  const hdf5::DatatypeHandle memory_type = make_event_memory_type();
  hdf5::check(H5Dread(dataset.get(), memory_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, events.data()),
              "H5Dread(" + what + ")");
  return events;
}

}  // namespace cmlbed::trace
