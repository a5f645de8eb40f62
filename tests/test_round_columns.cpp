// The column lists of the results file's tables (/rounds, the events, /plan and
// /plan/replans), and docs/reference/results-format.md checked against what the writer stores, so
// that the documentation cannot drift from the file: the /rounds table against
// round_columns(), the events table and enum tables against a written file.

#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "cmlbed/trace/event_columns.hpp"
#include "cmlbed/trace/hdf5_handles.hpp"
#include "cmlbed/planner/plan_table.hpp"
#include "cmlbed/train/replan_table.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "cmlbed/trace/round_columns.hpp"

#ifndef CMLBED_RESULTS_FORMAT_DOC
#error "tests/CMakeLists.txt passes the path of docs/reference/results-format.md"
#endif

namespace cmlbed::trace {
namespace {

using hdf5::DatasetHandle;
using hdf5::DatatypeHandle;
using hdf5::FileHandle;
using hdf5::owned;

std::vector<std::string> column_names() {
  std::vector<std::string> names;
  for (const RoundColumn& column : round_columns()) names.emplace_back(column.name);
  return names;
}

TEST(ResultsRoundColumns, OlderColumnsKeepTheirOrderAndNewOnesFollow) {
  EXPECT_EQ(column_names(),
            (std::vector<std::string>{"round", "t_start_ns", "t_end_ns", "wall_s", "bytes_up",
                                      "bytes_down", "test_loss", "test_accuracy", "busy_s",
                                      "idle_s", "messages_up", "messages_down", "flops",
                                      "device_accuracy", "mask_sparsity", "paced_stages", "paced_overran",
                                      "paced_s", "paced_overrun_s", "paced_worst_ratio", "cpu_s", "runqueue_s",
                                      "involuntary_switches", "host_steal", "emulation", "network_cpu_s",
                                      "network_runqueue_s"}));
  const std::vector<std::string> names = column_names();
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size())
      << "names are unique: HDF5 matches members by name";
}

TEST(ResultsRoundColumns, TypesAndShapesFollowTheRecordMembers) {
  std::vector<std::string> texts;
  for (const RoundColumn& column : round_columns()) texts.push_back(column_type_text(column));
  EXPECT_EQ(texts, (std::vector<std::string>{
                       "int32", "int64", "int64", "float64", "int64", "int64", "float64",
                       "float64", "float64[mpi_size]", "float64[mpi_size]", "int64", "int64",
                       "float64[mpi_size]", "float64[mpi_size]", "float64[mpi_size]",
                       // the emulation fidelity figures and verdict
                       "float64[mpi_size]", "float64[mpi_size]", "float64[mpi_size]", "float64[mpi_size]",
                       "float64[mpi_size]", "float64[mpi_size]", "float64[mpi_size]", "float64[mpi_size]",
                       "float64[mpi_size]", "int32", "float64[mpi_size]", "float64[mpi_size]"}));
  for (const RoundColumn& column : round_columns()) {
    const std::size_t element = column.type() == ColumnType::int32 ? 4 : 8;
    EXPECT_EQ(column.bytes(5), column.per_rank() ? 5 * element : element) << column.name;
  }
}

// --- the events, /plan and /plan/replans -----------------------------------------------

TEST(ResultsEventColumns, AreEventsMembersInFileOrder) {
  std::vector<std::string> names;
  std::vector<std::size_t> offsets;
  std::vector<bool> enums;
  for (const EventColumn& column : event_columns()) {
    names.emplace_back(column.name);
    offsets.push_back(column.offset());
    enums.push_back(column.enum_names() != nullptr);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"round", "batch", "micro_batch", "lane", "kind",
                                             "message", "held", "peer", "bytes", "t_start_ns",
                                             "t_end_ns"}));
  EXPECT_EQ(offsets, (std::vector<std::size_t>{
                         offsetof(Event, round), offsetof(Event, batch),
                         offsetof(Event, micro_batch), offsetof(Event, lane),
                         offsetof(Event, kind), offsetof(Event, message), offsetof(Event, held),
                         offsetof(Event, peer),
                         offsetof(Event, bytes), offsetof(Event, t_start_ns),
                         offsetof(Event, t_end_ns)}));
  EXPECT_EQ(enums, (std::vector<bool>{false, false, false, true, true, true, true, false, false,
                                      false, false}));
  EXPECT_EQ(event_columns()[4].enum_names(), &event_kind_names());
}

// A file of one rank, for the tests that write tables into it.
class ResultsPlanColumns : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = ::testing::TempDir() + "cmlbed_plan_XXXXXX";
    ASSERT_NE(::mkdtemp(directory_.data()), nullptr);
    path_ = directory_ + "/plan.h5";
  }
  void TearDown() override {
    ::unlink(path_.c_str());
    ::rmdir(directory_.c_str());
  }
  ResultsFile create() const {
    RunInfo info;
    info.mpi_size = 1;
    info.clock_offsets_ns = {0};
    info.clock_uncertainty_ns = {0};
    return ResultsFile(path_, false, info);
  }

  std::string directory_;
  std::string path_;
};

TEST_F(ResultsPlanColumns, EveryPlanColumnIsAFloat64DatasetOfItsName) {
  planner::PlanTable plan;
  double next = 1;
  for (const planner::PlanColumn& column : planner::plan_columns()) {
    plan.*column.values = {next, next + 0.5};
    next += 1;
  }
  plan.profile_json = "{}";
  {
    ResultsFile results = create();
    planner::write_plan(results, plan);
    results.close();
  }
  for (const planner::PlanColumn& column : planner::plan_columns()) {
    EXPECT_EQ(ResultsFile::read_float64_dataset(path_, std::string("/plan/") + column.name),
              plan.*column.values)
        << column.name;
  }
}

TEST_F(ResultsPlanColumns, EveryReplanColumnIsAFloat64DatasetOfItsNameAndAsLongAsRound) {
  train::ReplanTable table;
  double next = 1;
  for (const train::ReplanColumn& column : train::replan_columns()) {
    table.*column.values = {next, NAN};
    next += 1;
  }
  ResultsFile results = create();
  train::write_replans(results, table);
  results.flush();
  for (const train::ReplanColumn& column : train::replan_columns()) {
    const std::vector<double> stored =
        ResultsFile::read_float64_dataset(path_, std::string("/plan/replans/") + column.name);
    ASSERT_EQ(stored.size(), 2u) << column.name;
    EXPECT_EQ(stored[0], (table.*column.values)[0]) << column.name;
    EXPECT_TRUE(std::isnan(stored[1])) << column.name;
  }
  table.changed.pop_back();
  try {
    train::write_replans(results, table);
    FAIL() << "a column shorter than round was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()), "write_replans: column changed has 1 rows, round has 2");
  }
}

// --- docs/reference/results-format.md ---------------------------------------------------------

std::string read_doc() {
  std::ifstream in(CMLBED_RESULTS_FORMAT_DOC);
  EXPECT_TRUE(in.good()) << "cannot read " << CMLBED_RESULTS_FORMAT_DOC;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::string without_backticks(std::string text) {
  if (text.size() >= 2 && text.front() == '`' && text.back() == '`') {
    text = text.substr(1, text.size() - 2);
  }
  return text;
}

// The body rows of the first markdown table whose header line is `header`, after the
// first line that starts with `after`, as cells (trimmed, outer pipes dropped). The
// last cell keeps any '|' of its own text.
std::vector<std::vector<std::string>> table_rows(const std::string& doc, const std::string& after,
                                                 const std::string& header, std::size_t cells) {
  std::size_t at = doc.find("\n" + after);
  EXPECT_NE(at, std::string::npos) << "no line starting with: " << after;
  if (at == std::string::npos) return {};
  at = doc.find("\n" + header + "\n", at);
  EXPECT_NE(at, std::string::npos) << "no table " << header << " after " << after;
  if (at == std::string::npos) return {};
  at += header.size() + 2;
  at = doc.find('\n', at) + 1;  // the |---| line

  std::vector<std::vector<std::string>> rows;
  while (at < doc.size() && doc[at] == '|') {
    const std::size_t end = doc.find('\n', at);
    std::string line = doc.substr(at, end - at);
    at = end == std::string::npos ? doc.size() : end + 1;
    line = trimmed(line).substr(1);  // the leading '|'
    if (!line.empty() && line.back() == '|') line.pop_back();
    std::vector<std::string> row;
    for (std::size_t cell = 0; cell + 1 < cells; ++cell) {
      const std::size_t bar = line.find('|');
      row.push_back(trimmed(line.substr(0, bar)));
      line = bar == std::string::npos ? "" : line.substr(bar + 1);
    }
    row.push_back(trimmed(line));
    rows.push_back(row);
  }
  return rows;
}

TEST(ResultsFormatDoc, RoundsTableListsEveryColumn) {
  const auto rows =
      table_rows(read_doc(), "## `/rounds`", "| field | type | unit | meaning |", 4);
  std::vector<std::string> documented;
  std::vector<std::string> expected;
  for (const auto& row : rows) {
    EXPECT_FALSE(row[3].empty()) << row[0] << " has no meaning in the docs";
    documented.push_back(without_backticks(row[0]) + " " + row[1] + " " + row[2]);
  }
  for (const RoundColumn& column : round_columns()) {
    const std::string unit = *column.unit == '\0' ? "-" : column.unit;
    expected.push_back(std::string(column.name) + " " + column_type_text(column) + " " + unit);
  }
  EXPECT_EQ(documented, expected) << "docs/reference/results-format.md's /rounds table (name type unit) "
                                     "must list round_columns() in order";
}

std::vector<std::string> documented_enum(const std::string& doc, const std::string& member) {
  std::vector<std::string> names;
  const auto rows = table_rows(doc, "`" + member + "` is an HDF5 enum with these names:",
                               "| name | value | meaning |", 3);
  for (const auto& row : rows) {
    EXPECT_EQ(row[1], std::to_string(names.size())) << member << " " << row[0];
    names.push_back(without_backticks(row[0]));
  }
  return names;
}

TEST(ResultsFormatDoc, EventEnumTablesListEveryName) {
  const std::string doc = read_doc();
  EXPECT_EQ(documented_enum(doc, "kind"), event_kind_names());
  EXPECT_EQ(documented_enum(doc, "message"), message_type_names());
}

// The type column as the docs write it, from the member of a written file.
std::string documented_type(hid_t member) {
  switch (H5Tget_class(member)) {
    case H5T_ENUM:
      return H5Tget_size(member) == 1 ? "enum (uint8)" : "enum (?)";
    case H5T_INTEGER:
      return (H5Tget_sign(member) == H5T_SGN_NONE ? "uint" : "int") +
             std::to_string(8 * H5Tget_size(member));
    case H5T_FLOAT:
      return "float" + std::to_string(8 * H5Tget_size(member));
    default:
      return "?";
  }
}

TEST(ResultsFormatDoc, EventsTableListsEveryMemberOfTheFile) {
  std::string directory = ::testing::TempDir() + "cmlbed_doc_XXXXXX";
  ASSERT_NE(::mkdtemp(directory.data()), nullptr);
  const std::string path = directory + "/events.h5";
  {
    RunInfo info;
    info.mpi_size = 1;
    info.hosts = {"node"};
    info.clock_offsets_ns = {0};
    info.clock_uncertainty_ns = {0};
    ResultsFile results(path, false, info);
  }
  std::vector<std::string> stored;
  {
    hdf5::silence_error_printing();
    const auto file =
        owned<FileHandle>(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen");
    const auto dataset = owned<DatasetHandle>(
        H5Dopen2(file.get(), "/ranks/0/events", H5P_DEFAULT), "H5Dopen2 events");
    const auto type = owned<DatatypeHandle>(H5Dget_type(dataset.get()), "H5Dget_type");
    for (int index = 0; index < H5Tget_nmembers(type.get()); ++index) {
      char* name = H5Tget_member_name(type.get(), static_cast<unsigned>(index));
      const auto member = owned<DatatypeHandle>(
          H5Tget_member_type(type.get(), static_cast<unsigned>(index)), "H5Tget_member_type");
      stored.push_back(std::string(name) + " " + documented_type(member.get()));
      H5free_memory(name);
    }
  }
  ::unlink(path.c_str());
  ::rmdir(directory.c_str());

  std::vector<std::string> documented;
  for (const auto& row :
       table_rows(read_doc(), "## `/ranks/<r>/events`", "| field | type | unit / meaning |", 3)) {
    documented.push_back(without_backticks(row[0]) + " " + row[1]);
  }
  EXPECT_EQ(documented, stored) << "docs/reference/results-format.md's events table (name type) must list "
                                   "the members of the file's events, in order";
}

}  // namespace
}  // namespace cmlbed::trace
