// /checkpoints, declared here and written by trace/'s generic row tables.
#include "cmlbed/run/checkpoint_table.hpp"

#include <cstddef>

namespace cmlbed::run {
namespace {

constexpr const char* kTable = "checkpoints";

const std::vector<trace::RowField>& checkpoint_fields() {
  using trace::FieldType;
  static const std::vector<trace::RowField> fields = {
      {"rounds", offsetof(CheckpointRecord, rounds), FieldType::int32},
      {"bytes", offsetof(CheckpointRecord, bytes), FieldType::int64},
      {"seconds", offsetof(CheckpointRecord, seconds), FieldType::float64},
  };
  return fields;
}

}  // namespace

void record_checkpoint(trace::ResultsFile& results, const CheckpointRecord& record,
                       const std::string& checkpoint_file) {
  results.append_rows(kTable, checkpoint_fields(), std::vector<CheckpointRecord>{record});
  results.set_root_integer("checkpoint_rounds", record.rounds);
  results.set_root_text("checkpoint_file", checkpoint_file);
}

std::vector<CheckpointRecord> read_checkpoints(const std::string& path) {
  return trace::ResultsFile::read_rows<CheckpointRecord>(path, kTable, checkpoint_fields());
}

}  // namespace cmlbed::run
