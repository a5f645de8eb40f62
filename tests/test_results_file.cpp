// Results file: what ResultsFile writes reads back exactly, through its own readers,
// the HDF5 C API, h5py and h5dump; configuration checks; HDF5 failures as Hdf5Error;
// and a writer killed mid-run leaves every flushed round readable; files written before
// the newer columns and event members existed still read.

#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "cmlbed/trace/hdf5_handles.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "cmlbed/trace/round_columns.hpp"

namespace cmlbed::trace {

namespace {

namespace fs = std::filesystem;
using hdf5::AttributeHandle;
using hdf5::DatasetHandle;
using hdf5::DataspaceHandle;
using hdf5::DatatypeHandle;
using hdf5::FileHandle;
using hdf5::owned;
using hdf5::PropertyListHandle;

constexpr int kRanks = 3;

// Events compared field by field; as tuples, so that gtest prints a differing row.
using EventFields = std::tuple<std::int32_t, std::int32_t, std::int32_t, int, int, int,
                               std::int32_t, std::int64_t, std::int64_t, std::int64_t>;

std::vector<EventFields> fields(const std::vector<Event>& events) {
  std::vector<EventFields> rows;
  for (const Event& e : events) {
    rows.emplace_back(e.round, e.batch, e.micro_batch, static_cast<int>(e.lane),
                      static_cast<int>(e.kind), static_cast<int>(e.message), e.peer, e.bytes,
                      e.t_start_ns, e.t_end_ns);
  }
  return rows;
}

RunInfo sample_run_info(int ranks = kRanks) {
  RunInfo info;
  info.config_ini = "[experiment]\nmethod = fl\nseed = 7\n\n[output]\nfile = r.h5\n";
  info.cmlbed_version = "0.1.0";
  info.git_revision = "0123456789ab";
  info.method = "fl";
  info.started_at = "2024-05-01T12:00:00Z";
  info.heap = "keep";
  info.mpi_size = ranks;
  for (int rank = 0; rank < ranks; ++rank) {
    info.hosts.push_back("node-" + std::to_string(rank));
    info.clock_offsets_ns.push_back(rank == 0 ? 0 : -1000 * rank - 7);
    info.clock_uncertainty_ns.push_back(rank == 0 ? 0 : 250 + rank);
  }
  return info;
}

Event make_event(int round, int batch, Lane lane, EventKind kind, std::int64_t start_ns,
                 std::int64_t end_ns, int peer = -1, std::int64_t bytes = 0,
                 MessageType message = MessageType::none) {
  Event event;
  event.message = message;
  event.round = round;
  event.batch = batch;
  event.micro_batch = batch % 2;
  event.lane = lane;
  event.kind = kind;
  event.peer = peer;
  event.bytes = bytes;
  event.t_start_ns = start_ns;
  event.t_end_ns = end_ns;
  return event;
}

// A few events of every lane and several kinds, distinct per rank and round.
std::vector<Event> round_events(int rank, int round, int count = 4) {
  std::vector<Event> events;
  const std::int64_t base = 1'000'000'000LL * round + 1000 * rank;
  for (int i = 0; i < count; ++i) {
    const std::int64_t start = base + 10 * i;
    switch (i % 4) {
      case 0:
        events.push_back(make_event(round, i, Lane::compute, EventKind::forward, start, start + 5));
        break;
      case 1:
        events.push_back(
            make_event(round, i, Lane::compute, EventKind::backward, start, start + 7));
        break;
      case 2:
        events.push_back(
            make_event(round, i, Lane::uplink, EventKind::send, start, start + 3, 0, 4096 + rank,
                       MessageType::activation));
        break;
      default:
        events.push_back(
            make_event(round, i, Lane::downlink, EventKind::recv, start, start + 9, 0, 1LL << 40,
                       MessageType::control));
        break;
    }
  }
  return events;
}

RoundRecord make_round(int round, int ranks = kRanks) {
  RoundRecord record;
  record.round = round;
  record.t_start_ns = 2'000'000'000LL * round;
  record.t_end_ns = record.t_start_ns + 1'500'000'000LL * round;
  record.wall_s = 1.5 * round;
  record.bytes_up = 1000 * round;
  record.bytes_down = (1LL << 33) + round;
  record.test_loss = round % 2 == 0 ? std::numeric_limits<double>::quiet_NaN() : 0.25 / round;
  record.test_accuracy = 0.1 * round;
  record.messages_up = 3LL * round;
  record.messages_down = (1LL << 35) + round;  // beyond int32
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int rank = 0; rank < ranks; ++rank) {
    record.busy_s.push_back(0.5 * round + 0.01 * rank);
    record.idle_s.push_back(record.wall_s - record.busy_s.back());
    record.flops.push_back(rank == 0 ? 0.0 : 1.25e15 * round + rank);  // beyond int32, exact
    // The server has no score; the last device is scored only in odd rounds.
    const bool scored = rank > 0 && (rank < ranks - 1 || round % 2 == 1);
    record.device_accuracy.push_back(scored ? 0.5 + 0.01 * rank + 0.001 * round : nan);
    record.mask_sparsity.push_back(rank == 0 ? nan : 0.125 * rank + 0.01 * round);
    record.cpu_s.push_back(0.25 * round + rank);  // one fidelity column with values, the rest NaN
  }
  fill_unmeasured(record, static_cast<std::size_t>(ranks));
  return record;
}

// Equal, with NaN equal to NaN: one float64 column of one round.
void expect_same_value(double expected, double actual, const std::string& what) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << what << ": expected NaN, got " << actual;
  } else {
    EXPECT_EQ(expected, actual) << what;
  }
}

// Every column of round_columns(), so that a new column is round-tripped without a
// new line here.
void expect_same_round(const RoundRecord& expected, const RoundRecord& actual) {
  for (const RoundColumn& column : round_columns()) {
    std::visit(
        [&](auto member) {
          const auto& want = expected.*member;
          const auto& got = actual.*member;
          using Value = std::decay_t<decltype(want)>;
          if constexpr (std::is_same_v<Value, std::vector<double>>) {
            ASSERT_EQ(want.size(), got.size()) << column.name;
            for (std::size_t rank = 0; rank < want.size(); ++rank) {
              expect_same_value(want[rank], got[rank],
                                std::string(column.name) + "[" + std::to_string(rank) + "]");
            }
          } else if constexpr (std::is_floating_point_v<Value>) {
            expect_same_value(want, got, column.name);
          } else {
            EXPECT_EQ(want, got) << column.name;
          }
        },
        column.field);
  }
}

bool is_executable(const char* path) { return ::access(path, X_OK) == 0; }

int run_shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// --- C API readers, independent of ResultsFile's own -------------------------------

FileHandle open_with_c_api(const std::string& path) {
  hdf5::silence_error_printing();
  return owned<FileHandle>(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen");
}

AttributeHandle open_root_attribute(hid_t file, const char* name) {
  return owned<AttributeHandle>(H5Aopen_by_name(file, "/", name, H5P_DEFAULT, H5P_DEFAULT),
                                std::string("H5Aopen_by_name ") + name);
}

std::vector<std::string> read_string_array(hid_t attribute) {
  const auto space = owned<DataspaceHandle>(H5Aget_space(attribute), "H5Aget_space");
  const auto count = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get()));
  auto type = owned<DatatypeHandle>(H5Tcopy(H5T_C_S1), "H5Tcopy");
  hdf5::check(H5Tset_size(type.get(), H5T_VARIABLE), "H5Tset_size");
  std::vector<char*> pointers(count, nullptr);
  hdf5::check(H5Aread(attribute, type.get(), pointers.data()), "H5Aread strings");
  std::vector<std::string> values;
  for (char* pointer : pointers) {
    values.emplace_back(pointer);
    H5free_memory(pointer);
  }
  return values;
}

std::vector<std::int64_t> read_int64_array(hid_t attribute) {
  const auto space = owned<DataspaceHandle>(H5Aget_space(attribute), "H5Aget_space");
  std::vector<std::int64_t> values(
      static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get())));
  hdf5::check(H5Aread(attribute, H5T_NATIVE_INT64, values.data()), "H5Aread int64");
  return values;
}

std::vector<std::string> member_names(hid_t compound) {
  std::vector<std::string> names;
  const int count = H5Tget_nmembers(compound);
  for (int i = 0; i < count; ++i) {
    char* name = H5Tget_member_name(compound, static_cast<unsigned>(i));
    names.emplace_back(name);
    H5free_memory(name);
  }
  return names;
}

DatatypeHandle member_type(hid_t compound, const char* name) {
  const int index = H5Tget_member_index(compound, name);
  return owned<DatatypeHandle>(H5Tget_member_type(compound, static_cast<unsigned>(index)),
                               std::string("H5Tget_member_type ") + name);
}

std::vector<std::string> enum_names(hid_t enum_type) {
  std::vector<std::string> names;
  const int count = H5Tget_nmembers(enum_type);
  for (int value = 0; value < count; ++value) {
    const auto stored = static_cast<std::uint8_t>(value);
    char name[64] = {};
    hdf5::check(H5Tenum_nameof(enum_type, &stored, name, sizeof name), "H5Tenum_nameof");
    names.emplace_back(name);
  }
  return names;
}

// check_can_create refuses `path` with a one-line message containing `expected`.
void expect_refusal(const std::string& path, bool overwrite, const std::string& expected) {
  try {
    ResultsFile::check_can_create(path, overwrite);
    ADD_FAILURE() << path << ": expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
  }
}

class ResultsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "cmlbed_results_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(dir_, ignored);
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  // Writes a file of kRanks ranks: events in two appends per rank but rank 1 (none),
  // and three rounds.
  std::string write_sample(const std::string& name = "run.h5") {
    const std::string path = file(name);
    ResultsFile results(path, false, sample_run_info());
    for (int round = 1; round <= 2; ++round) {
      results.append_events(0, round_events(0, round));
      results.append_events(2, round_events(2, round, 7));
      results.flush();
    }
    for (int round = 1; round <= 3; ++round) results.append_round(make_round(round));
    results.set_summary({{"final_accuracy", 0.875}, {"total_s", 12.5}});
    results.close();
    return path;
  }

  fs::path dir_;
};

TEST_F(ResultsFileTest, RootAttributesReadBackWithTheCApi) {
  const std::string path = write_sample();
  const RunInfo info = sample_run_info();
  const FileHandle file = open_with_c_api(path);

  for (const auto& [name, expected] :
       std::vector<std::pair<const char*, std::string>>{{"config", info.config_ini},
                                                        {"cmlbed_version", info.cmlbed_version},
                                                        {"git_revision", info.git_revision},
                                                        {"method", info.method},
                                                        {"started_at", info.started_at},
                                                        {"heap", info.heap}}) {
    const AttributeHandle attribute = open_root_attribute(file.get(), name);
    const auto type = owned<DatatypeHandle>(H5Aget_type(attribute.get()), "H5Aget_type");
    EXPECT_EQ(H5Tget_class(type.get()), H5T_STRING) << name;
    EXPECT_GT(H5Tis_variable_str(type.get()), 0) << name;
    EXPECT_EQ(H5Tget_cset(type.get()), H5T_CSET_UTF8) << name;
    EXPECT_EQ(hdf5::read_string_attribute(attribute.get(), name), expected);
    EXPECT_EQ(ResultsFile::read_string_attribute(path, name), expected);
  }

  const AttributeHandle mpi_size = open_root_attribute(file.get(), "mpi_size");
  const auto mpi_size_type = owned<DatatypeHandle>(H5Aget_type(mpi_size.get()), "H5Aget_type");
  EXPECT_EQ(H5Tget_class(mpi_size_type.get()), H5T_INTEGER);
  EXPECT_EQ(H5Tget_size(mpi_size_type.get()), 4U);
  std::int32_t ranks = 0;
  hdf5::check(H5Aread(mpi_size.get(), H5T_NATIVE_INT32, &ranks), "H5Aread mpi_size");
  EXPECT_EQ(ranks, kRanks);

  EXPECT_EQ(read_string_array(open_root_attribute(file.get(), "hosts").get()), info.hosts);
  EXPECT_EQ(read_int64_array(open_root_attribute(file.get(), "clock_offsets_ns").get()),
            info.clock_offsets_ns);
  EXPECT_EQ(read_int64_array(open_root_attribute(file.get(), "clock_uncertainty_ns").get()),
            info.clock_uncertainty_ns);
}

TEST_F(ResultsFileTest, EventsOfSeveralRanksAndAppendsReadBackInOrder) {
  const std::string path = write_sample();
  std::vector<Event> rank0 = round_events(0, 1);
  std::vector<Event> more0 = round_events(0, 2);
  rank0.insert(rank0.end(), more0.begin(), more0.end());
  std::vector<Event> rank2 = round_events(2, 1, 7);
  std::vector<Event> more2 = round_events(2, 2, 7);
  rank2.insert(rank2.end(), more2.begin(), more2.end());

  EXPECT_EQ(fields(ResultsFile::read_events(path, 0)), fields(rank0));
  EXPECT_TRUE(ResultsFile::read_events(path, 1).empty());
  EXPECT_EQ(fields(ResultsFile::read_events(path, 2)), fields(rank2));
  EXPECT_THROW(ResultsFile::read_events(path, kRanks), Hdf5Error);
}

TEST_F(ResultsFileTest, EventsTableIsAChunkedExtendibleCompoundWithNamedEnums) {
  const std::string path = write_sample();
  const FileHandle file = open_with_c_api(path);
  for (int rank = 0; rank < kRanks; ++rank) {
    const std::string name = "/ranks/" + std::to_string(rank) + "/events";
    const auto dataset =
        owned<DatasetHandle>(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT), "H5Dopen2");
    const auto type = owned<DatatypeHandle>(H5Dget_type(dataset.get()), "H5Dget_type");
    ASSERT_EQ(H5Tget_class(type.get()), H5T_COMPOUND);
    EXPECT_EQ(member_names(type.get()),
              (std::vector<std::string>{"round", "batch", "micro_batch", "lane", "kind", "message",
                                        "held", "peer", "bytes", "t_start_ns", "t_end_ns"}));
    EXPECT_EQ(H5Tget_size(type.get()), 44U) << "packed rows";

    const DatatypeHandle lane = member_type(type.get(), "lane");
    const DatatypeHandle kind = member_type(type.get(), "kind");
    const DatatypeHandle message = member_type(type.get(), "message");
    const DatatypeHandle held = member_type(type.get(), "held");
    ASSERT_EQ(H5Tget_class(held.get()), H5T_ENUM);
    EXPECT_EQ(enum_names(held.get()), held_names());
    ASSERT_EQ(H5Tget_class(lane.get()), H5T_ENUM);
    ASSERT_EQ(H5Tget_class(kind.get()), H5T_ENUM);
    ASSERT_EQ(H5Tget_class(message.get()), H5T_ENUM);
    EXPECT_EQ(H5Tget_size(lane.get()), 1U);
    EXPECT_EQ(H5Tget_size(message.get()), 1U);
    EXPECT_EQ(enum_names(lane.get()), lane_names());
    EXPECT_EQ(enum_names(kind.get()), event_kind_names());
    EXPECT_EQ(enum_names(message.get()), message_type_names());
    const auto base = owned<DatatypeHandle>(H5Tget_super(kind.get()), "H5Tget_super");
    EXPECT_EQ(H5Tget_sign(base.get()), H5T_SGN_NONE);
    for (const char* int32 : {"round", "batch", "micro_batch", "peer"}) {
      EXPECT_EQ(H5Tget_size(member_type(type.get(), int32).get()), 4U) << int32;
    }
    for (const char* int64 : {"bytes", "t_start_ns", "t_end_ns"}) {
      EXPECT_EQ(H5Tget_size(member_type(type.get(), int64).get()), 8U) << int64;
    }

    const auto creation =
        owned<PropertyListHandle>(H5Dget_create_plist(dataset.get()), "H5Dget_create_plist");
    EXPECT_EQ(H5Pget_layout(creation.get()), H5D_CHUNKED);
    hsize_t chunk = 0;
    EXPECT_EQ(H5Pget_chunk(creation.get(), 1, &chunk), 1);
    EXPECT_EQ(chunk, 4096U);
    const auto space = owned<DataspaceHandle>(H5Dget_space(dataset.get()), "H5Dget_space");
    hsize_t rows = 0;
    hsize_t max_rows = 0;
    H5Sget_simple_extent_dims(space.get(), &rows, &max_rows);
    EXPECT_EQ(max_rows, H5S_UNLIMITED);
    EXPECT_EQ(rows, rank == 0 ? 8U : rank == 1 ? 0U : 14U);
  }
}

// A rank's events table is chunked by the rows it is expected to hold (at most 4096), so
// that a simulation of many ranks with few events each is not mostly empty chunks.
TEST_F(ResultsFileTest, EventTablesAreChunkedByTheExpectedRows) {
  const std::string path = file("chunked.h5");
  RunInfo info = sample_run_info();
  info.expected_events = {10000, 0, 172};
  ASSERT_EQ(info.expected_events.size(), static_cast<std::size_t>(kRanks));
  { ResultsFile(path, false, info).close(); }
  const FileHandle opened = open_with_c_api(path);
  const std::vector<hsize_t> expected = {4096, 1, 172};
  for (int rank = 0; rank < kRanks; ++rank) {
    const std::string name = "/ranks/" + std::to_string(rank) + "/events";
    const auto dataset = owned<DatasetHandle>(H5Dopen2(opened.get(), name.c_str(), H5P_DEFAULT), "H5Dopen2");
    const auto creation = owned<PropertyListHandle>(H5Dget_create_plist(dataset.get()), "H5Dget_create_plist");
    hsize_t chunk = 0;
    ASSERT_EQ(H5Pget_chunk(creation.get(), 1, &chunk), 1);
    EXPECT_EQ(chunk, expected[static_cast<std::size_t>(rank)]) << name;
  }
  info.expected_events.pop_back();
  EXPECT_THROW(ResultsFile(file("short.h5"), false, info), std::invalid_argument);
}

// A feature's own table (append_rows / read_rows): a packed compound of the fields it
// declares, created with its first rows, continued by a reopened file.
struct SampleRow {
  std::int32_t id = 0;
  double value = 0;
  std::int64_t count = 0;
};
const std::vector<RowField> kSampleFields = {{"id", offsetof(SampleRow, id), FieldType::int32},
                                             {"value", offsetof(SampleRow, value), FieldType::float64},
                                             {"count", offsetof(SampleRow, count), FieldType::int64}};

TEST_F(ResultsFileTest, FeatureTablesAppendReadBackAndContinueAfterReopening) {
  const std::string path = file("feature.h5");
  EXPECT_THROW(ResultsFile::read_rows<SampleRow>(file("none.h5"), "samples", kSampleFields), Hdf5Error);
  {
    ResultsFile results(path, false, sample_run_info());
    EXPECT_TRUE(ResultsFile::read_rows<SampleRow>(path, "samples", kSampleFields).empty());
    results.append_rows("samples", kSampleFields, std::vector<SampleRow>{{1, 0.5, 10}, {2, 1.5, 20}});
    results.append_rows("samples", kSampleFields, std::vector<SampleRow>{});
    EXPECT_THROW(results.append_rows("a/b", kSampleFields, std::vector<SampleRow>{{}}), std::invalid_argument);
    EXPECT_THROW(results.append_rows("empty", {}, std::vector<SampleRow>{{}}), std::invalid_argument);
    results.close();
  }
  {
    ResultsFile results = ResultsFile::reopen(path, {0, {0, 0, 0}}, 0, "[experiment]\n");
    results.append_rows("samples", kSampleFields, std::vector<SampleRow>{{3, 2.5, 30}});
    results.close();
  }
  const auto rows = ResultsFile::read_rows<SampleRow>(path, "samples", kSampleFields);
  ASSERT_EQ(rows.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(rows[static_cast<std::size_t>(i)].id, i + 1);
    EXPECT_DOUBLE_EQ(rows[static_cast<std::size_t>(i)].value, i + 0.5);
    EXPECT_EQ(rows[static_cast<std::size_t>(i)].count, 10 * (i + 1));
  }
  // Packed in the file: 4 + 8 + 8 bytes, not the struct's padded size.
  const FileHandle opened = open_with_c_api(path);
  const auto dataset = owned<DatasetHandle>(H5Dopen2(opened.get(), "/samples", H5P_DEFAULT), "H5Dopen2");
  const auto type = owned<DatatypeHandle>(H5Dget_type(dataset.get()), "H5Dget_type");
  EXPECT_EQ(H5Tget_size(type.get()), 20u);
  // A field the table does not have (a file written before the field existed) reads as 0.
  const std::vector<RowField> newer = {{"id", offsetof(SampleRow, id), FieldType::int32},
                                       {"added_later", offsetof(SampleRow, count), FieldType::int64}};
  const auto older = ResultsFile::read_rows<SampleRow>(path, "samples", newer);
  ASSERT_EQ(older.size(), 3u);
  EXPECT_EQ(older[2].id, 3);
  EXPECT_EQ(older[2].count, 0);
}

TEST(EventTotals, SumEventsPerRoundLaneKindAndMessage) {
  const std::vector<Event> events = {
      make_event(0, 0, Lane::compute, EventKind::forward, 0, 1'000'000),
      make_event(0, 1, Lane::compute, EventKind::forward, 2'000'000, 5'000'000),
      make_event(0, 0, Lane::uplink, EventKind::send, 1'000'000, 4'000'000, 0, 800, MessageType::activation),
      make_event(0, 1, Lane::uplink, EventKind::send, 5'000'000, 6'000'000, 0, 200, MessageType::activation),
      make_event(1, 0, Lane::compute, EventKind::forward, 9'000'000, 9'500'000),
  };
  const std::vector<EventTotal> totals = event_totals(3, events);
  ASSERT_EQ(totals.size(), 3U);  // round 0 forward, round 0 activation sends, round 1 forward
  EXPECT_EQ(totals[0].rank, 3);
  EXPECT_EQ(totals[0].round, 0);
  EXPECT_EQ(totals[0].kind, EventKind::forward);
  EXPECT_EQ(totals[0].count, 2);
  EXPECT_DOUBLE_EQ(totals[0].seconds, 0.004);
  EXPECT_EQ(totals[1].lane, Lane::uplink);
  EXPECT_EQ(totals[1].message, MessageType::activation);
  EXPECT_EQ(totals[1].count, 2);
  EXPECT_EQ(totals[1].bytes, 1000);
  EXPECT_DOUBLE_EQ(totals[1].seconds, 0.004);
  EXPECT_EQ(totals[2].round, 1);
  EXPECT_DOUBLE_EQ(totals[2].seconds, 0.0005);
}

// event_detail = totals: no /ranks, an /event_totals table instead, the attribute says
// which; each kind of file refuses the other kind of rows.
TEST_F(ResultsFileTest, TotalsFileKeepsEventTotalsInsteadOfEvents) {
  const std::string path = file("totals.h5");
  RunInfo info = sample_run_info();
  info.event_detail = EventDetail::totals;
  {
    ResultsFile results(path, false, info);
    const std::vector<Event> events = {make_event(0, 0, Lane::compute, EventKind::forward, 0, 2'000'000)};
    EXPECT_THROW(results.append_events(0, events), std::logic_error);
    results.append_event_totals(event_totals(0, events));
    results.append_event_totals(event_totals(1, events));
    results.close();
  }
  const FileHandle opened = open_with_c_api(path);
  EXPECT_LE(H5Lexists(opened.get(), "/ranks", H5P_DEFAULT), 0);
  EXPECT_EQ(ResultsFile::read_string_attribute(path, "event_detail"), "totals");
  const auto dataset = owned<DatasetHandle>(H5Dopen2(opened.get(), "/event_totals", H5P_DEFAULT), "H5Dopen2");
  const auto type = owned<DatatypeHandle>(H5Dget_type(dataset.get()), "H5Dget_type");
  EXPECT_EQ(member_names(type.get()), (std::vector<std::string>{"rank", "round", "lane", "kind", "message", "count",
                                                                 "bytes", "seconds"}));
  EXPECT_EQ(enum_names(member_type(type.get(), "kind").get()), event_kind_names());
  struct Row {
    std::int32_t rank;
    std::int64_t count;
    double seconds;
  };
  const auto memory = owned<DatatypeHandle>(H5Tcreate(H5T_COMPOUND, sizeof(Row)), "H5Tcreate");
  H5Tinsert(memory.get(), "rank", offsetof(Row, rank), H5T_NATIVE_INT32);
  H5Tinsert(memory.get(), "count", offsetof(Row, count), H5T_NATIVE_INT64);
  H5Tinsert(memory.get(), "seconds", offsetof(Row, seconds), H5T_NATIVE_DOUBLE);
  std::vector<Row> rows(2);
  ASSERT_GE(H5Dread(dataset.get(), memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), 0);
  EXPECT_EQ(rows[0].rank, 0);
  EXPECT_EQ(rows[1].rank, 1);
  EXPECT_EQ(rows[1].count, 1);
  EXPECT_DOUBLE_EQ(rows[1].seconds, 0.002);

  ResultsFile every_event(file("all.h5"), false, sample_run_info());
  EXPECT_THROW(every_event.append_event_totals({}), std::logic_error);
  EXPECT_EQ(ResultsFile::read_string_attribute(write_sample(), "event_detail"), "all");
}

TEST_F(ResultsFileTest, RoundsReadBackWithPerRankArrays) {
  const std::string path = write_sample();
  const std::vector<RoundRecord> rounds = ResultsFile::read_rounds(path);
  ASSERT_EQ(rounds.size(), 3U);
  for (int round = 1; round <= 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    expect_same_round(make_round(round), rounds[static_cast<std::size_t>(round - 1)]);
  }

  const FileHandle file = open_with_c_api(path);
  const auto dataset =
      owned<DatasetHandle>(H5Dopen2(file.get(), "/rounds", H5P_DEFAULT), "H5Dopen2 /rounds");
  const auto type = owned<DatatypeHandle>(H5Dget_type(dataset.get()), "H5Dget_type");
  EXPECT_EQ(member_names(type.get()),
            (std::vector<std::string>{"round", "t_start_ns", "t_end_ns", "wall_s", "bytes_up",
                                      "bytes_down", "test_loss", "test_accuracy", "busy_s",
                                      "idle_s", "messages_up", "messages_down", "flops",
                                      "device_accuracy", "mask_sparsity", "paced_stages", "paced_overran",
                                      "paced_s", "paced_overrun_s", "paced_worst_ratio", "cpu_s", "runqueue_s",
                                      "involuntary_switches", "host_steal", "emulation", "network_cpu_s",
                                      "network_runqueue_s"}));
  for (const char* int64 : {"t_start_ns", "t_end_ns", "bytes_up", "bytes_down", "messages_up",
                            "messages_down"}) {
    const DatatypeHandle member = member_type(type.get(), int64);
    EXPECT_GT(H5Tequal(member.get(), H5T_NATIVE_INT64), 0) << int64;
  }
  for (const char* name : {"busy_s", "idle_s", "flops", "device_accuracy", "mask_sparsity"}) {
    const DatatypeHandle member = member_type(type.get(), name);
    ASSERT_EQ(H5Tget_class(member.get()), H5T_ARRAY) << name;
    ASSERT_EQ(H5Tget_array_ndims(member.get()), 1) << name;
    hsize_t length = 0;
    H5Tget_array_dims2(member.get(), &length);
    EXPECT_EQ(length, static_cast<hsize_t>(kRanks)) << name;
    const auto element = owned<DatatypeHandle>(H5Tget_super(member.get()), "H5Tget_super");
    EXPECT_GT(H5Tequal(element.get(), H5T_NATIVE_DOUBLE), 0) << name;
  }
}

TEST_F(ResultsFileTest, EventsOfEveryMessageTypeReadBack) {
  const std::string path = file("messages.h5");
  std::vector<Event> events;
  for (std::size_t value = 0; value < message_type_names().size(); ++value) {
    events.push_back(make_event(1, static_cast<int>(value), Lane::uplink, EventKind::send,
                                10 * static_cast<std::int64_t>(value), 5, 0, 64,
                                static_cast<MessageType>(value)));
  }
  events.back().kind = EventKind::wait;  // a wait names the message it waits for
  events.back().lane = Lane::compute;
  {
    ResultsFile results(path, false, sample_run_info());
    results.append_events(1, events);
  }
  EXPECT_EQ(fields(ResultsFile::read_events(path, 1)), fields(events));
}

// Every per-rank column is checked, and the message names each one that is wrong.
TEST_F(ResultsFileTest, RoundsWithoutOneEntryPerRankAreRefusedByName) {
  const std::string path = file("ragged.h5");
  ResultsFile results(path, false, sample_run_info());
  for (const RoundColumn& column : round_columns()) {
    const auto* member = std::get_if<RoundColumn::PerRank>(&column.field);
    if (member == nullptr) continue;
    for (const int size : {0, kRanks - 1, kRanks + 1}) {
      RoundRecord record = make_round(2);
      (record.**member).resize(static_cast<std::size_t>(size));
      try {
        results.append_round(record);
        ADD_FAILURE() << column.name << " with " << size << " entries was accepted";
      } catch (const std::invalid_argument& error) {
        EXPECT_EQ(std::string(error.what()),
                  "results file: round 2: " + std::string(column.name) + " has " +
                      std::to_string(size) +
                      " entries, expected one per rank (3; NaN where a rank has no value)");
      }
    }
  }
  RoundRecord two_wrong = make_round(4);
  two_wrong.flops.clear();
  two_wrong.device_accuracy.pop_back();
  try {
    results.append_round(two_wrong);
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("flops has 0, device_accuracy has 2 entries"),
              std::string::npos)
        << error.what();
  }
  results.append_round(make_round(5));
  results.close();
  const std::vector<RoundRecord> rounds = ResultsFile::read_rounds(path);
  ASSERT_EQ(rounds.size(), 1U) << "refused rounds leave no row";
  expect_same_round(make_round(5), rounds[0]);
}

// A file as the writer made it before messages_up, messages_down, flops,
// device_accuracy and the events' message existed, written here with the C API.
void write_file_of_the_older_layout(const std::string& path, const std::vector<Event>& events,
                                    const std::vector<RoundRecord>& rounds) {
  hdf5::silence_error_printing();
  const auto file = owned<FileHandle>(
      H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT), "H5Fcreate");
  const auto write_table = [&](const char* name, hid_t file_type, hid_t memory_type,
                               const void* rows, hsize_t count) {
    const auto space =
        owned<DataspaceHandle>(H5Screate_simple(1, &count, nullptr), "H5Screate_simple");
    const auto dataset = owned<DatasetHandle>(H5Dcreate2(file.get(), name, file_type, space.get(),
                                                         H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                              std::string("H5Dcreate2 ") + name);
    hdf5::check(H5Dwrite(dataset.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows),
                std::string("H5Dwrite ") + name);
  };
  const auto make_enum = [](const std::vector<std::string>& names) {
    auto type = owned<DatatypeHandle>(H5Tenum_create(H5T_NATIVE_UINT8), "H5Tenum_create");
    for (std::size_t value = 0; value < names.size(); ++value) {
      const auto stored = static_cast<std::uint8_t>(value);
      hdf5::check(H5Tenum_insert(type.get(), names[value].c_str(), &stored), "H5Tenum_insert");
    }
    return type;
  };

  // Events: trace::Event's layout without the message member, packed in the file.
  const DatatypeHandle lane = make_enum(lane_names());
  const DatatypeHandle kind = make_enum(event_kind_names());
  const auto event_type =
      owned<DatatypeHandle>(H5Tcreate(H5T_COMPOUND, sizeof(Event)), "H5Tcreate events");
  const auto member = [&](const char* name, std::size_t offset, hid_t type) {
    hdf5::check(H5Tinsert(event_type.get(), name, offset, type), name);
  };
  member("round", offsetof(Event, round), H5T_NATIVE_INT32);
  member("batch", offsetof(Event, batch), H5T_NATIVE_INT32);
  member("micro_batch", offsetof(Event, micro_batch), H5T_NATIVE_INT32);
  member("lane", offsetof(Event, lane), lane.get());
  member("kind", offsetof(Event, kind), kind.get());
  member("peer", offsetof(Event, peer), H5T_NATIVE_INT32);
  member("bytes", offsetof(Event, bytes), H5T_NATIVE_INT64);
  member("t_start_ns", offsetof(Event, t_start_ns), H5T_NATIVE_INT64);
  member("t_end_ns", offsetof(Event, t_end_ns), H5T_NATIVE_INT64);
  const auto event_file_type = owned<DatatypeHandle>(H5Tcopy(event_type.get()), "H5Tcopy");
  hdf5::check(H5Tpack(event_file_type.get()), "H5Tpack");
  ASSERT_EQ(H5Tget_size(event_file_type.get()), 42U) << "the older events' row size";
  owned<hdf5::GroupHandle>(H5Gcreate2(file.get(), "/ranks", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                           "H5Gcreate2 /ranks");
  owned<hdf5::GroupHandle>(
      H5Gcreate2(file.get(), "/ranks/0", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      "H5Gcreate2 /ranks/0");
  write_table("/ranks/0/events", event_file_type.get(), event_type.get(), events.data(),
              events.size());

  // Rounds: the first ten columns, packed.
  const std::size_t ranks = rounds.at(0).busy_s.size();
  const hsize_t per_rank_length = ranks;
  const auto per_rank = owned<DatatypeHandle>(
      H5Tarray_create2(H5T_NATIVE_DOUBLE, 1, &per_rank_length), "H5Tarray_create2");
  const std::size_t row_size = 4 + 8 * 7 + 2 * 8 * ranks;
  const auto round_type =
      owned<DatatypeHandle>(H5Tcreate(H5T_COMPOUND, row_size), "H5Tcreate rounds");
  std::vector<unsigned char> rows(rounds.size() * row_size);
  std::size_t offset = 0;
  const auto column = [&](const char* name, hid_t type, std::size_t size, auto value_of) {
    hdf5::check(H5Tinsert(round_type.get(), name, offset, type), name);
    for (std::size_t index = 0; index < rounds.size(); ++index) {
      std::memcpy(rows.data() + index * row_size + offset, value_of(rounds[index]), size);
    }
    offset += size;
  };
  column("round", H5T_NATIVE_INT32, 4, [](const RoundRecord& r) { return &r.round; });
  column("t_start_ns", H5T_NATIVE_INT64, 8, [](const RoundRecord& r) { return &r.t_start_ns; });
  column("t_end_ns", H5T_NATIVE_INT64, 8, [](const RoundRecord& r) { return &r.t_end_ns; });
  column("wall_s", H5T_NATIVE_DOUBLE, 8, [](const RoundRecord& r) { return &r.wall_s; });
  column("bytes_up", H5T_NATIVE_INT64, 8, [](const RoundRecord& r) { return &r.bytes_up; });
  column("bytes_down", H5T_NATIVE_INT64, 8, [](const RoundRecord& r) { return &r.bytes_down; });
  column("test_loss", H5T_NATIVE_DOUBLE, 8, [](const RoundRecord& r) { return &r.test_loss; });
  column("test_accuracy", H5T_NATIVE_DOUBLE, 8,
         [](const RoundRecord& r) { return &r.test_accuracy; });
  column("busy_s", per_rank.get(), 8 * ranks,
         [](const RoundRecord& r) { return r.busy_s.data(); });
  column("idle_s", per_rank.get(), 8 * ranks,
         [](const RoundRecord& r) { return r.idle_s.data(); });
  write_table("/rounds", round_type.get(), round_type.get(), rows.data(), rounds.size());
}

TEST_F(ResultsFileTest, FilesOfTheOlderLayoutStillRead) {
  const std::string path = file("older.h5");
  std::vector<Event> events = round_events(0, 1, 6);
  for (Event& event : events) event.message = MessageType::none;  // the older file has none
  const std::vector<RoundRecord> written = {make_round(1), make_round(2)};
  write_file_of_the_older_layout(path, events, written);

  EXPECT_EQ(fields(ResultsFile::read_events(path, 0)), fields(events));

  const std::vector<RoundRecord> rounds = ResultsFile::read_rounds(path);
  ASSERT_EQ(rounds.size(), written.size());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t index = 0; index < rounds.size(); ++index) {
    SCOPED_TRACE("round " + std::to_string(index + 1));
    RoundRecord expected = written[index];
    expected.messages_up = 0;  // missing integer columns read as 0 ...
    expected.messages_down = 0;
    expected.flops.assign(kRanks, nan);  // ... and missing float64 columns as NaN per rank
    expected.device_accuracy.assign(kRanks, nan);
    expected.mask_sparsity.assign(kRanks, nan);
    expected.cpu_s.assign(kRanks, nan);
    expect_same_round(expected, rounds[index]);
  }
}

TEST_F(ResultsFileTest, SummaryAttributesCanBeOverwritten) {
  const std::string path = file("summary.h5");
  {
    ResultsFile results(path, false, sample_run_info(1));
    results.set_summary({{"b", 1.0}, {"a", 2.0}});
    results.set_summary({{"b", 3.0}, {"c", -1.0}});
  }
  EXPECT_EQ(ResultsFile::read_summary(path),
            (std::vector<std::pair<std::string, double>>{{"a", 2.0}, {"b", 3.0}, {"c", -1.0}}));
}

TEST_F(ResultsFileTest, ProcessMeasuresReadBackOnePerRankAndCanBeReplaced) {
  const std::string path = file("process.h5");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  {
    ResultsFile results(path, false, sample_run_info());
    results.write_process_measure("startup_s", {1.5, 2.0, 2.5});
    results.write_process_measure("peak_rss_bytes", {1.0, 2.0, 3.0});
    results.write_process_measure("peak_rss_bytes", {4e8, nan, 2e8});  // replaced
    EXPECT_THROW(results.write_process_measure("startup_s", {1.0}), std::invalid_argument);
  }
  EXPECT_EQ(ResultsFile::read_process_measure(path, "startup_s"), (std::vector<double>{1.5, 2.0, 2.5}));
  const auto peaks = ResultsFile::read_process_measure(path, "peak_rss_bytes");
  ASSERT_EQ(peaks.size(), 3u);
  EXPECT_EQ(peaks[0], 4e8);
  EXPECT_TRUE(std::isnan(peaks[1]));
  EXPECT_EQ(peaks[2], 2e8);
  EXPECT_THROW(ResultsFile::read_process_measure(path, "missing"), Hdf5Error);
}

TEST_F(ResultsFileTest, EmptyRunHasEmptyTablesAndSummary) {
  const std::string path = file("empty.h5");
  { ResultsFile results(path, false, sample_run_info(2)); }
  EXPECT_TRUE(ResultsFile::read_rounds(path).empty());
  EXPECT_TRUE(ResultsFile::read_events(path, 1).empty());
  EXPECT_TRUE(ResultsFile::read_summary(path).empty());
}

TEST_F(ResultsFileTest, RejectsRowsThatDoNotFit) {
  ResultsFile results(file("bad.h5"), false, sample_run_info());
  EXPECT_THROW(results.append_events(-1, round_events(0, 1)), std::invalid_argument);
  EXPECT_THROW(results.append_events(kRanks, round_events(0, 1)), std::invalid_argument);
  Event unnamed_kind = make_event(1, 0, Lane::compute, EventKind::forward, 0, 1);
  unnamed_kind.kind = static_cast<EventKind>(200);
  EXPECT_THROW(results.append_events(0, {unnamed_kind}), std::invalid_argument);
  Event unnamed_lane = make_event(1, 0, Lane::compute, EventKind::forward, 0, 1);
  unnamed_lane.lane = static_cast<Lane>(3);
  EXPECT_THROW(results.append_events(0, {unnamed_lane}), std::invalid_argument);
  Event unnamed_message = make_event(1, 0, Lane::uplink, EventKind::send, 0, 1);
  unnamed_message.message = static_cast<MessageType>(7);
  EXPECT_THROW(results.append_events(0, {unnamed_message}), std::invalid_argument);
  EXPECT_THROW(results.append_round(make_round(1, kRanks + 1)), std::invalid_argument);
  results.close();
  EXPECT_TRUE(ResultsFile::read_events(file("bad.h5"), 0).empty()) << "nothing half-written";
  EXPECT_THROW(results.flush(), std::logic_error);
}

TEST_F(ResultsFileTest, RejectsRunInfoWithoutOneEntryPerRank) {
  RunInfo info = sample_run_info();
  info.hosts.pop_back();
  EXPECT_THROW(ResultsFile(file("a.h5"), false, info), std::invalid_argument);
  info = sample_run_info();
  info.clock_uncertainty_ns.push_back(0);
  EXPECT_THROW(ResultsFile(file("b.h5"), false, info), std::invalid_argument);
  info = sample_run_info();
  info.mpi_size = 0;
  EXPECT_THROW(ResultsFile(file("c.h5"), false, info), std::invalid_argument);
  EXPECT_TRUE(fs::is_empty(dir_)) << "validated before creating the file";
}

TEST_F(ResultsFileTest, CreatesExclusivelyUnlessOverwriting) {
  const std::string path = write_sample();
  EXPECT_THROW(ResultsFile(path, false, sample_run_info()), Hdf5Error);
  EXPECT_EQ(ResultsFile::read_rounds(path).size(), 3U) << "the existing file is untouched";
  { ResultsFile replaced(path, true, sample_run_info(1)); }
  EXPECT_TRUE(ResultsFile::read_rounds(path).empty());
  EXPECT_EQ(ResultsFile::read_events(path, 0).size(), 0U);
}

TEST_F(ResultsFileTest, CreatesMissingDirectories) {
  const std::string path = file("group/sweep-7/run.h5");
  { ResultsFile created(path, false, sample_run_info(1)); }
  EXPECT_TRUE(ResultsFile::read_rounds(path).empty());
  const std::string blocked = file("plain-file");
  std::ofstream(blocked) << "x";
  EXPECT_THROW(ResultsFile(blocked + "/run.h5", false, sample_run_info(1)), std::runtime_error);
}

TEST_F(ResultsFileTest, MovedFileKeepsWriting) {
  const std::string path = file("moved.h5");
  ResultsFile first(path, false, sample_run_info());
  ResultsFile second = std::move(first);
  second.append_round(make_round(1));
  EXPECT_THROW(first.append_round(make_round(2)),
               std::logic_error);  // NOLINT(bugprone-use-after-move)
  second.close();
  EXPECT_EQ(ResultsFile::read_rounds(path).size(), 1U);
}

TEST_F(ResultsFileTest, Hdf5FailureCarriesTheHdf5ErrorStack) {
  const std::string path = file("not-hdf5.h5");
  std::ofstream(path) << "this is plain text, not an HDF5 file\n";
  ::testing::internal::CaptureStderr();
  try {
    ResultsFile::read_rounds(path);
    ADD_FAILURE() << "expected Hdf5Error";
  } catch (const Hdf5Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("H5Fopen('" + path + "', read-only) failed"), std::string::npos)
        << message;
    EXPECT_NE(message.find("unable to open file"), std::string::npos) << message;
    EXPECT_NE(message.find("file signature not found"), std::string::npos) << message;
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "HDF5 printed its stack itself";

  EXPECT_THROW(ResultsFile::read_string_attribute(write_sample(), "no_such_attribute"), Hdf5Error);
  try {
    ResultsFile::read_string_attribute(file("run.h5"), "mpi_size");
    ADD_FAILURE() << "expected Hdf5Error";
  } catch (const Hdf5Error& error) {
    EXPECT_NE(std::string(error.what()).find("is not a single string"), std::string::npos);
  }
}

TEST_F(ResultsFileTest, CheckCanCreate) {
  EXPECT_NO_THROW(ResultsFile::check_can_create(file("new.h5"), false));
  EXPECT_NO_THROW(ResultsFile::check_can_create(file("new.h5"), true));
  EXPECT_TRUE(fs::is_empty(dir_)) << "the check creates nothing";

  const std::string existing = file("existing.h5");
  std::ofstream(existing) << "x";
  expect_refusal(existing, false,
                 "output.file '" + existing +
                     "' exists; set --output.overwrite=true or choose another output.file");
  EXPECT_NO_THROW(ResultsFile::check_can_create(existing, true));
  EXPECT_NO_THROW(ResultsFile::check_can_create(file("missing/deeper/run.h5"), false))
      << "missing directories are created with the file";
  EXPECT_FALSE(fs::exists(dir_ / "missing")) << "but not by the check";
  expect_refusal(existing + "/deeper/run.h5", false, "is not a directory");
  expect_refusal(existing + "/run.h5", false, "is not a directory");
  expect_refusal(dir_.string(), true, "is a directory");
  expect_refusal("", false, "output.file is empty");
}

TEST_F(ResultsFileTest, CheckCanCreateNeedsWritePermission) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: permission checks cannot fail";
  const std::string existing = file("existing.h5");
  std::ofstream(existing) << "x";
  const fs::path locked = dir_ / "locked";
  fs::create_directory(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  expect_refusal((locked / "run.h5").string(), false, "cannot create files in directory");
  fs::permissions(existing, fs::perms::owner_read);
  expect_refusal(existing, true, "cannot be overwritten");
  fs::permissions(locked, fs::perms::owner_all);
}

TEST_F(ResultsFileTest, H5dumpShowsEnumNames) {
  if (!is_executable("/usr/bin/h5dump")) GTEST_SKIP() << "/usr/bin/h5dump not installed";
  const std::string path = write_sample();
  const std::string dump = file("dump.txt");
  ASSERT_EQ(run_shell("/usr/bin/h5dump -d /ranks/0/events '" + path + "' > '" + dump + "'"), 0);
  std::ifstream in(dump);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("H5T_ENUM"), std::string::npos);
  EXPECT_NE(text.find("forward"), std::string::npos);
  EXPECT_NE(text.find("downlink"), std::string::npos);
}

TEST_F(ResultsFileTest, OpensWithH5pyAsStructuredArrays) {
  const char* python = "/usr/bin/python3";
  if (!is_executable(python) ||
      run_shell(std::string(python) + " -c 'import h5py' 2>/dev/null") != 0) {
    GTEST_SKIP() << "/usr/bin/python3 with h5py not available; h5py check skipped";
  }
  const std::string path = write_sample();
  const std::string script = file("check.py");
  std::ofstream(script) << R"PY(
import sys, math, h5py
with h5py.File(sys.argv[1], "r") as f:
    a = f.attrs
    assert isinstance(a["config"], str) and a["config"].startswith("[experiment]"), a["config"]
    assert a["method"] == "fl" and a["started_at"] == "2024-05-01T12:00:00Z"
    assert int(a["mpi_size"]) == 3
    assert list(a["hosts"]) == ["node-0", "node-1", "node-2"], list(a["hosts"])
    assert list(a["clock_offsets_ns"]) == [0, -1007, -2007], a["clock_offsets_ns"]
    ev = f["ranks/2/events"][()]
    assert ev.dtype.names == ("round", "batch", "micro_batch", "lane", "kind", "message",
                              "held", "peer", "bytes", "t_start_ns", "t_end_ns"), ev.dtype.names
    assert len(ev) == 14 and len(f["ranks/1/events"]) == 0
    kinds = {v: k for k, v in h5py.check_enum_dtype(ev.dtype["kind"]).items()}
    lanes = {v: k for k, v in h5py.check_enum_dtype(ev.dtype["lane"]).items()}
    assert [kinds[k] for k in ev["kind"][:4]] == ["forward", "backward", "send", "recv"]
    assert [lanes[l] for l in ev["lane"][:4]] == ["compute", "compute", "uplink", "downlink"]
    assert ev["bytes"][3] == 1 << 40
    messages = {v: k for k, v in h5py.check_enum_dtype(ev.dtype["message"]).items()}
    assert [messages[m] for m in ev["message"][:4]] == ["none", "none", "activation", "control"]
    r = f["rounds"][()]
    assert list(r["round"]) == [1, 2, 3] and r["busy_s"].shape == (3, 3), r["busy_s"].shape
    assert math.isnan(r["test_loss"][1]) and r["idle_s"][2][1] == 4.5 - 1.51
    assert list(r["messages_down"]) == [(1 << 35) + 1, (1 << 35) + 2, (1 << 35) + 3]
    assert r["flops"].shape == (3, 3) and r["flops"][1][2] == 2.5e15 + 2, r["flops"]
    assert math.isnan(r["device_accuracy"][0][0]) and math.isnan(r["device_accuracy"][1][2])
    assert r["device_accuracy"][2][2] == 0.5 + 0.02 + 0.003
    assert dict(f["summary"].attrs) == {"final_accuracy": 0.875, "total_s": 12.5}
print("h5py ok")
)PY";
  EXPECT_EQ(run_shell(std::string(python) + " '" + script + "' '" + path + "'"), 0);
}

// The driver appends and flushes once per round. A writer killed (SIGKILL: no
// destructors, no atexit) after flushing round 3 and while holding a large unflushed
// round 4 must leave a file in which exactly rounds 1..3 are readable.
TEST_F(ResultsFileTest, KilledWriterLeavesEveryFlushedRoundReadable) {
  const std::string path = file("killed.h5");
  constexpr int kFlushedRounds = 3;
  // Enough round-4 events to spill HDF5's 1 MiB chunk cache, so that raw data of the
  // unflushed round does reach the file before the kill.
  constexpr int kUnflushedEvents = 60000;

  const pid_t child = ::fork();
  ASSERT_GE(child, 0) << "fork failed";
  if (child == 0) {
    // Only async-signal-safe exits from here: never return into the test runner.
    try {
      ResultsFile results(path, false, sample_run_info());
      for (int round = 1; round <= kFlushedRounds; ++round) {
        for (int rank = 0; rank < kRanks; ++rank) {
          results.append_events(rank, round_events(rank, round, 5 + rank));
        }
        results.append_round(make_round(round));
        results.flush();
      }
      for (int rank = 0; rank < kRanks; ++rank) {
        results.append_events(rank, round_events(rank, kFlushedRounds + 1, kUnflushedEvents));
      }
      results.append_round(make_round(kFlushedRounds + 1));
      results.set_summary({{"never_flushed", 1.0}});
      std::raise(SIGKILL);
    } catch (...) {
    }
    ::_exit(3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "the writer did not die by SIGKILL (exit status " << status << ")";

  const std::vector<RoundRecord> rounds = ResultsFile::read_rounds(path);
  ASSERT_EQ(rounds.size(), static_cast<std::size_t>(kFlushedRounds));
  for (int round = 1; round <= kFlushedRounds; ++round) {
    expect_same_round(make_round(round), rounds[static_cast<std::size_t>(round - 1)]);
  }
  for (int rank = 0; rank < kRanks; ++rank) {
    std::vector<Event> expected;
    for (int round = 1; round <= kFlushedRounds; ++round) {
      const std::vector<Event> events = round_events(rank, round, 5 + rank);
      expected.insert(expected.end(), events.begin(), events.end());
    }
    EXPECT_EQ(fields(ResultsFile::read_events(path, rank)), fields(expected)) << "rank " << rank;
  }
  EXPECT_EQ(ResultsFile::read_string_attribute(path, "method"), "fl");
  EXPECT_TRUE(ResultsFile::read_summary(path).empty());

  if (is_executable("/usr/bin/h5dump")) {
    EXPECT_EQ(run_shell("/usr/bin/h5dump '" + path + "' > /dev/null"), 0);
  }
}

// A writer killed right after creating the file (before any round) leaves a file that
// opens, with its run metadata and empty tables.
TEST_F(ResultsFileTest, WriterKilledBeforeTheFirstRoundLeavesAReadableFile) {
  const std::string path = file("killed_early.h5");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0) << "fork failed";
  if (child == 0) {
    try {
      ResultsFile results(path, false, sample_run_info());
      std::raise(SIGKILL);
    } catch (...) {
    }
    ::_exit(3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "exit status " << status;
  EXPECT_TRUE(ResultsFile::read_rounds(path).empty());
  EXPECT_TRUE(ResultsFile::read_events(path, 0).empty());
  EXPECT_EQ(ResultsFile::read_string_attribute(path, "method"), "fl");
  EXPECT_FALSE(ResultsFile::read_string_attribute(path, "config").empty());
  if (is_executable("/usr/bin/h5dump")) {
    EXPECT_EQ(run_shell("/usr/bin/h5dump '" + path + "' > /dev/null"), 0);
  }
}

}  // namespace
}  // namespace cmlbed::trace
