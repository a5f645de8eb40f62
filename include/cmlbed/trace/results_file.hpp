#pragma once
// The HDF5 results file of one run, written by the server (rank 0) only: run metadata
// as root attributes, every rank's events, one row per round and a summary. The
// layout is specified in docs/reference/results-format.md. The driver appends and flushes once
// per round, so a run killed part-way leaves a file in which every flushed round is
// readable.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cmlbed/trace/event.hpp"
#include "cmlbed/trace/event_totals.hpp"

namespace cmlbed::trace {

// What the root attributes record; the per-rank vectors have mpi_size entries.
struct RunInfo {
  std::string config_ini;  // the effective configuration, as INI text
  std::string cmlbed_version;
  std::string git_revision;
  std::string method;
  std::string method_table;  // the method table as JSON (config/method_columns.hpp)
  std::string started_at;  // ISO 8601, UTC, e.g. "2024-05-01T12:00:00Z"
  std::string heap = "system";  // the allocator's policy (cmlbed/base/heap_policy.hpp)
  std::string model_file_sha256;  // model.file's SHA-256 (model.name = torchscript), else ""
  int mpi_size = 0;
  std::vector<std::string> hosts;                  // host name of each rank
  std::vector<std::int64_t> clock_offsets_ns;      // each rank's offset to rank 0's clock
  std::vector<std::int64_t> clock_uncertainty_ns;  // half the round trip of the sync
  // How the file keeps events: a table per rank (all), or /event_totals (totals: a
  // simulation with too many events to store; trace/event_totals.hpp).
  EventDetail event_detail = EventDetail::all;
  // With `all`: the events each rank will write, when known (index = rank; empty:
  // unknown). A rank's table is chunked by that many rows (at most 4096), so that a file
  // of many ranks with few events each is not mostly empty chunks.
  std::vector<std::int64_t> expected_events;
};

// How many rows the tables hold: /rounds and each rank's events (index = rank).
struct RowCounts {
  std::uint64_t rounds = 0;
  std::vector<std::uint64_t> events;
};

// The type of one field of a feature's row (ResultsFile::append_rows).
enum class FieldType { int32, int64, float64 };

// One field of a feature's row struct: its name in the table, where it lies in the
// struct (offsetof) and its type. A feature lists its fields once and uses the list to
// write and to read its table (e.g. run/checkpoint_table.hpp).
struct RowField {
  const char* name;
  std::size_t offset;
  FieldType type;
};

// One float64 column of a feature's table struct: the dataset's name in the table's
// group and the member that holds the column (ResultsFile::write_float64_columns).
template <typename Table>
struct MemberColumn {
  const char* name;
  std::vector<double> Table::*values;
};

class ResultsFile {
 public:
  using RunInfo = ::cmlbed::trace::RunInfo;

  // For configuration checks before any training: throws std::invalid_argument with
  // a one-line message when `path` exists and !overwrite, is a directory, or cannot be
  // written, or when its parent directory is missing or not writable. Creates nothing.
  static void check_can_create(const std::string& path, bool overwrite);

  // Creates the file (truncating an existing one only when `overwrite`) with the root
  // attributes, one empty events table per rank, an empty rounds table and an empty
  // /summary group. Throws std::invalid_argument when the per-rank vectors of `info`
  // do not have mpi_size entries, Hdf5Error when HDF5 fails.
  ResultsFile(const std::string& path, bool overwrite, const RunInfo& info);
  ~ResultsFile();  // closes, ignoring errors; call close() to see them
  ResultsFile(ResultsFile&&) noexcept;
  ResultsFile& operator=(ResultsFile&&) noexcept;
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;

  // Opens an existing results file to continue its run (`cmlbed run --resume`). Keeps
  // the first `keep.rounds` rows of /rounds and `keep.events[r]` of each rank's events
  // (what was written after the checkpoint the run continues from is run again), drops
  // the final weights (/model), the marks of an interrupted run (`interrupted`,
  // `rounds_complete`) and /summary's values, appends `resumed_after` to the root
  // attribute `resumed_after_rounds` and replaces the root attribute `config` with
  // `config_ini` (a resumed run may run more rounds). Throws std::invalid_argument when
  // the file has fewer rows than `keep` or another rank count, Hdf5Error when HDF5 fails.
  static ResultsFile reopen(const std::string& path, const RowCounts& keep, int resumed_after,
                            const std::string& config_ini);

  const std::string& path() const;
  int mpi_size() const;

  // Appends rows to /ranks/<rank>/events, in the given order. Throws
  // std::invalid_argument for a rank outside [0, mpi_size) or a lane / kind / message
  // that has no name.
  void append_events(int rank, const std::vector<Event>& events);

  // Appends rows to /event_totals (a file made with event_detail = totals; append_events
  // is for the other kind: each throws std::logic_error on the wrong one).
  void append_event_totals(const std::vector<EventTotal>& totals);

  // Appends one row to /rounds (its columns: trace/round_columns.hpp). Every per-rank
  // vector (busy_s, idle_s, flops, device_accuracy) must have mpi_size entries, NaN
  // where a rank has no value; otherwise std::invalid_argument names each that does not.
  void append_round(const RoundRecord& record);
  // Rewrites the last row of /rounds (a resumed run scoring the round whose evaluation
  // a stop cut short); std::logic_error when the table is empty.
  void replace_last_round(const RoundRecord& record);

  // Writes each pair as a float64 attribute of /summary, replacing an attribute of
  // the same name; attributes not named stay as they are.
  void set_summary(const std::vector<std::pair<std::string, double>>& values);

  // Marks a run stopped by a signal: root attributes `interrupted` (the signal's name)
  // and `rounds_complete` (how many rounds the file holds and the run finished).
  void mark_interrupted(const std::string& signal, int rounds_complete);

  // The rows written so far (a checkpoint records them).
  RowCounts row_counts() const;

  // Appends rows to a feature's own table at the root (e.g. "checkpoints"), a compound
  // table of `fields`, stored packed; the table is created with the first rows, and a
  // reopened file continues the one it has. Every call must give the same fields.
  // Throws std::invalid_argument for a name with '/' or no fields, Hdf5Error when HDF5
  // fails (also for fields that do not match an existing table).
  template <typename Row>
  void append_rows(const std::string& table, const std::vector<RowField>& fields, const std::vector<Row>& rows) {
    static_assert(std::is_trivially_copyable_v<Row>, "a row is copied into the file byte by byte");
    append_compound_rows(table, sizeof(Row), fields, rows.data(), rows.size());
  }

  // A float64 root attribute (e.g. privacy_epsilon), replacing one of that name.
  void set_root_number(const std::string& name, double value);
  // An int32 root attribute (e.g. checkpoint_rounds), replacing one of that name.
  void set_root_integer(const std::string& name, std::int32_t value);
  // A string root attribute (e.g. emulation), replacing one of that name.
  void set_root_text(const std::string& name, const std::string& value);

  // Marks a run that the schedule simulator made (`cmlbed simulate`): root attributes
  // `simulated` = 1 and `profile` (the JSON profile its stage lengths came from).
  void mark_simulated(const std::string& profile_json);

  // A feature's own table (e.g. /plan, whose schema is the planner's): each column of
  // `table` as the float64 dataset <group>/<name>, replacing one there; the group (and
  // its parent) is created when missing. Columns of different lengths are the caller's
  // choice.
  template <typename Table>
  void write_float64_columns(const std::string& group, const std::vector<MemberColumn<Table>>& columns,
                             const Table& table) {
    for (const MemberColumn<Table>& column : columns) write_float64_column(group, column.name, table.*column.values);
  }
  void write_float64_column(const std::string& group, const std::string& name, const std::vector<double>& values);
  // A scalar attribute of `group` (created when missing), replacing one of that name.
  void set_group_integer(const std::string& group, const std::string& name, std::int32_t value);
  void set_group_number(const std::string& group, const std::string& name, double value);
  void set_group_text(const std::string& group, const std::string& name, const std::string& value);

  // Stores a model's final weights as the float32 dataset /model/<name>.
  void write_model(const std::string& name, const std::vector<float>& weights);

  // Stores one value per rank (mpi_size of them, NaN where a rank has none) as the
  // float64 dataset /process/<name>, replacing one of that name: start-up seconds by
  // phase and resident memory (docs/reference/results-format.md). Throws std::invalid_argument
  // for another count.
  void write_process_measure(const std::string& name, const std::vector<double>& per_rank);

  // Writes everything appended so far to disk (H5Fflush, global scope). What a
  // process killed after flush() leaves behind is readable up to this point.
  void flush();

  // Flushes and closes the file, throwing Hdf5Error on failure. Afterwards only the
  // destructor and assignment may be called.
  void close();

  // Readback for tests and tools; each opens the file read-only. Files written before
  // a column or event member existed read with the missing value 0 (integers), NaN
  // (floating point) or MessageType::none (an event's message).
  static std::vector<Event> read_events(const std::string& path, int rank);
  static std::vector<RoundRecord> read_rounds(const std::string& path);
  static std::string read_string_attribute(const std::string& path, const std::string& name);
  static std::vector<std::pair<std::string, double>> read_summary(const std::string& path);
  static std::vector<float> read_model(const std::string& path, const std::string& name);
  static int read_mpi_size(const std::string& path);
  // A feature's table written by append_rows; empty when the file has none.
  template <typename Row>
  static std::vector<Row> read_rows(const std::string& path, const std::string& table,
                                    const std::vector<RowField>& fields) {
    static_assert(std::is_trivially_copyable_v<Row>, "a row is copied out of the file byte by byte");
    const std::vector<unsigned char> bytes = read_compound_rows(path, table, sizeof(Row), fields);
    std::vector<Row> rows(bytes.size() / sizeof(Row));
    if (!rows.empty()) std::memcpy(static_cast<void*>(rows.data()), bytes.data(), bytes.size());
    return rows;
  }
  static std::vector<double> read_process_measure(const std::string& path, const std::string& name);
  // Any one-dimensional float64 dataset, by its path in the file (e.g. "/plan/replans/split").
  static std::vector<double> read_float64_dataset(const std::string& path, const std::string& dataset);

 private:
  void append_compound_rows(const std::string& table, std::size_t row_size, const std::vector<RowField>& fields,
                            const void* rows, std::size_t count);
  static std::vector<unsigned char> read_compound_rows(const std::string& path, const std::string& table,
                                                       std::size_t row_size, const std::vector<RowField>& fields);
  struct Impl;
  explicit ResultsFile(std::unique_ptr<Impl> impl);
  // The open file; throws std::logic_error after close() or a move. Also switches off
  // HDF5's printing of error stacks on the calling thread, so that every method that
  // touches the file starts with this one call.
  Impl& open_impl() const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cmlbed::trace
