#pragma once
// What an open ResultsFile holds, shared by the files that implement it (one per part
// of the file they read and write: results_file_<part>.cpp).
#include <map>
#include <string>
#include <vector>

#include "cmlbed/trace/hdf5_handles.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "hdf5_tables.hpp"
#include "round_table.hpp"

namespace cmlbed::trace {

struct ResultsFile::Impl {
  Impl(const std::string& file_path, int ranks)
      : path(file_path), mpi_size(ranks), round_layout(ranks) {}

  std::string path;
  int mpi_size;
  RoundLayout round_layout;
  // The file is declared first so that it is closed last.
  hdf5::FileHandle file;
  hdf5::GroupHandle summary;
  std::vector<hdf5::DatasetHandle> events;  // one per rank
  std::vector<hsize_t> event_rows;
  EventDetail event_detail = EventDetail::all;
  hdf5::DatasetHandle event_totals;  // event_detail = totals: /event_totals, instead of the above
  hsize_t event_total_rows = 0;
  hdf5::DatasetHandle rounds;
  hsize_t round_rows = 0;
  // The features' own tables (append_rows), by name: opened or created with their first rows.
  struct RowTable {
    hdf5::DatasetHandle dataset;
    hsize_t rows = 0;
  };
  std::map<std::string, RowTable> row_tables;
  hdf5::DatatypeHandle event_memory_type;
  hdf5::DatatypeHandle round_type;

  std::string where() const { return hdf5::quoted(path); }
};

constexpr const char* kEventTotalsTable = "/event_totals";

// The empty /event_totals table (results_file_event_totals.cpp).
hdf5::DatasetHandle create_event_totals_table(hid_t file, const std::string& where);

// The file access properties of a results file opened for writing (created or reopened).
hdf5::PropertyListHandle make_file_access(const std::string& path);

}  // namespace cmlbed::trace
