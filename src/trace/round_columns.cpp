#include "cmlbed/trace/round_columns.hpp"

#include <limits>
#include <type_traits>
#include <utility>

namespace cmlbed::trace {

const std::vector<RoundColumn>& round_columns() {
  using R = RoundRecord;
  // In file order. A new column goes at the end: files written before it lack it and
  // are read by name (docs/reference/results-format.md, "/rounds").
  static const std::vector<RoundColumn> columns = {
      {"round", &R::round, "", "round number"},
      {"t_start_ns", &R::t_start_ns, "ns", "start of the round's timed window, rank 0's time base"},
      {"t_end_ns", &R::t_end_ns, "ns", "end of the timed window (evaluation falls after it)"},
      {"wall_s", &R::wall_s, "s", "length of the timed window"},
      {"bytes_up", &R::bytes_up, "byte", "payload bytes devices -> server"},
      {"bytes_down", &R::bytes_down, "byte", "payload bytes server -> devices"},
      {"test_loss", &R::test_loss, "", "mean test loss after the round, NaN if not evaluated"},
      {"test_accuracy", &R::test_accuracy, "", "test accuracy after the round, NaN if none"},
      {"busy_s", &R::busy_s, "s", "union of each rank's compute intervals in the window"},
      {"idle_s", &R::idle_s, "s", "wall_s - busy_s, per rank"},
      {"messages_up", &R::messages_up, "", "messages devices -> server"},
      {"messages_down", &R::messages_down, "", "messages server -> devices"},
      {"flops", &R::flops, "FLOP", "floating-point operations of each rank's training"},
      {"device_accuracy", &R::device_accuracy, "", "each device's accuracy, NaN for the server"},
      {"mask_sparsity", &R::mask_sparsity, "", "adasplit: share of each device's server-mask entries below 0.5"},
      {"paced_stages", &R::paced_stages, "", "stages held to a length (devices.flops paced, devices.slowdown stretched)"},
      {"paced_overran", &R::paced_overran, "", "of which the work outlasted the length"},
      {"paced_s", &R::paced_s, "s", "summed lengths the held stages were held to"},
      {"paced_overrun_s", &R::paced_overrun_s, "s", "summed time the held stages ran past their lengths"},
      {"paced_worst_ratio", &R::paced_worst_ratio, "", "largest measured / held length (0: none overran)"},
      {"cpu_s", &R::cpu_s, "s", "CPU time of the rank's compute threads in the round"},
      {"runqueue_s", &R::runqueue_s, "s", "time the rank's compute threads waited for a core in the round"},
      {"involuntary_switches", &R::involuntary_switches, "", "times the rank's threads were preempted"},
      {"host_steal", &R::host_steal, "", "share of the rank's host CPU time stolen by the hypervisor"},
      {"emulation", &R::emulation, "", "verdict of the round: 0 faithful, 1 degraded, 2 broken, -1 not judged"},
      {"network_cpu_s", &R::network_cpu_s, "s", "CPU time of the rank's communication thread in the round"},
      {"network_runqueue_s", &R::network_runqueue_s, "s", "time the communication thread waited for a core in the round"},
  };
  return columns;
}

void fill_unmeasured(RoundRecord& record, std::size_t ranks) {
  for (const RoundColumn& column : round_columns()) {
    if (const auto* member = std::get_if<RoundColumn::PerRank>(&column.field); member && (record.**member).empty()) {
      (record.**member).assign(ranks, std::numeric_limits<double>::quiet_NaN());
    }
  }
}

ColumnType RoundColumn::type() const {
  return std::visit(
      [](auto member) {
        using Value = std::remove_reference_t<decltype(std::declval<RoundRecord&>().*member)>;
        if constexpr (std::is_same_v<Value, std::int32_t>) {
          return ColumnType::int32;
        } else if constexpr (std::is_same_v<Value, std::int64_t>) {
          return ColumnType::int64;
        } else {
          return ColumnType::float64;  // double, or a per-rank vector of double
        }
      },
      field);
}

std::size_t RoundColumn::bytes(std::size_t mpi_size) const {
  const std::size_t element = type() == ColumnType::int32 ? 4 : 8;
  return per_rank() ? element * mpi_size : element;
}

const char* column_type_name(ColumnType type) {
  switch (type) {
    case ColumnType::int32:
      return "int32";
    case ColumnType::int64:
      return "int64";
    case ColumnType::float64:
      return "float64";
  }
  return "unknown";
}

std::string column_type_text(const RoundColumn& column) {
  std::string text = column_type_name(column.type());
  if (column.per_rank()) text += "[mpi_size]";
  return text;
}

}  // namespace cmlbed::trace
