// /rounds: one row per round (its columns: cmlbed/trace/round_columns.hpp).
#include <stdexcept>

#include "cmlbed/trace/results_file.hpp"
#include "results_file_impl.hpp"

namespace cmlbed::trace {

void ResultsFile::append_round(const RoundRecord& record) {
  Impl& impl = open_impl();
  validate_round(record, impl.round_layout.ranks);
  const std::vector<unsigned char> row = pack_round(impl.round_layout, record);
  hdf5::append_rows(impl.rounds.get(), impl.round_rows, 1, impl.round_type.get(), row.data(),
                    "'/rounds' in " + impl.where());
}

void ResultsFile::replace_last_round(const RoundRecord& record) {
  Impl& impl = open_impl();
  if (impl.round_rows == 0) throw std::logic_error("replace_last_round: '/rounds' in " + impl.where() + " is empty");
  validate_round(record, impl.round_layout.ranks);
  const std::vector<unsigned char> row = pack_round(impl.round_layout, record);
  hdf5::write_rows(impl.rounds.get(), impl.round_rows - 1, 1, impl.round_type.get(), row.data(),
                   "'/rounds' in " + impl.where());
}

std::vector<RoundRecord> ResultsFile::read_rounds(const std::string& path) {
  const hdf5::FileHandle file = hdf5::open_read_only(path);
  const std::string what = "'/rounds' in " + hdf5::quoted(path);
  const auto dataset = hdf5::owned<hdf5::DatasetHandle>(H5Dopen2(file.get(), "/rounds", H5P_DEFAULT),
                                                        "H5Dopen2(" + what + ")");
  const hsize_t rows = hdf5::row_count(dataset.get(), what);
  const RoundLayout layout(rounds_rank_count(dataset.get(), what));
  const std::vector<bool> present = stored_round_columns(dataset.get(), what);
  const hdf5::DatatypeHandle memory_type = make_round_type(layout, present);
  std::vector<unsigned char> bytes(static_cast<std::size_t>(rows) * layout.size);
  std::vector<RoundRecord> records;
  if (rows == 0) return records;
  hdf5::check(H5Dread(dataset.get(), memory_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()),
              "H5Dread(" + what + ")");
  for (hsize_t row = 0; row < rows; ++row) {
    records.push_back(unpack_round(layout, present, bytes.data() + row * layout.size));
  }
  return records;
}

}  // namespace cmlbed::trace
