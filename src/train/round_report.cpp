#include "cmlbed/train/round_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <limits>
#include <numeric>
#include <optional>

#include "cmlbed/trace/busy_time.hpp"
#include "cmlbed/trace/round_columns.hpp"

namespace cmlbed::train {
namespace {

double percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

double mean_device_idle_fraction(const trace::RoundRecord& r) {
  if (r.idle_s.size() < 2 || r.wall_s <= 0) return 0;
  double sum = 0;
  for (std::size_t rank = 1; rank < r.idle_s.size(); ++rank) sum += r.idle_s[rank];
  return sum / static_cast<double>(r.idle_s.size() - 1) / r.wall_s;
}

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

// FLOPs of the run: the server's, and all devices' together.
std::pair<double, double> training_flops(const std::vector<trace::RoundRecord>& rounds) {
  double server = 0, devices = 0;
  for (const auto& r : rounds) {
    for (std::size_t rank = 0; rank < r.flops.size(); ++rank) (rank == 0 ? server : devices) += r.flops[rank];
  }
  return {server, devices};
}

}  // namespace

trace::RoundRecord make_round_record(int round, std::int64_t start_ns, std::int64_t end_ns,
                                     const std::vector<std::vector<trace::Event>>& events,
                                     bool timeline_recorded, const RoundMeasures& measures) {
  trace::RoundRecord record;
  record.round = round;
  record.t_start_ns = start_ns;
  record.t_end_ns = end_ns;
  record.wall_s = static_cast<double>(end_ns - start_ns) * 1e-9;
  if (!timeline_recorded) {
    // No events, so no compute intervals: busy and idle time are unknown, not zero.
    record.busy_s.assign(events.size(), std::nan(""));
    record.idle_s.assign(events.size(), std::nan(""));
    record.bytes_up = measures.counted.bytes_up;
    record.bytes_down = measures.counted.bytes_down;
    record.messages_up = measures.counted.messages_up;
    record.messages_down = measures.counted.messages_down;
  } else {
    record.busy_s = trace::busy_seconds_per_rank(events, start_ns, end_ns);
    for (double busy : record.busy_s) record.idle_s.push_back(std::max(0.0, record.wall_s - busy));
    // From the events, so that the table and the events agree to the byte.
    for (std::size_t rank = 0; rank < events.size(); ++rank) {
      const std::int64_t evaluating_from = rank < measures.evaluation_start_ns.size()
                                               ? measures.evaluation_start_ns[rank]
                                               : std::numeric_limits<std::int64_t>::max();
      for (const trace::Event& e : events[rank]) {
        // Sends before the round (a resumed run scoring the round it stopped in) or
        // after its evaluation began are not the round's training traffic.
        if (e.kind != trace::EventKind::send || e.t_start_ns < start_ns || e.t_start_ns >= evaluating_from) continue;
        (rank == 0 ? record.bytes_down : record.bytes_up) += e.bytes;
        ++(rank == 0 ? record.messages_down : record.messages_up);
      }
    }
  }
  record.flops = measures.flops;
  record.mask_sparsity.assign(events.size(), std::nan(""));
  trace::fill_unmeasured(record, events.size());  // the fidelity figures, where the caller has none
  for (const auto& [device, sparsity] : measures.mask_sparsity) {
    if (device > 0 && static_cast<std::size_t>(device) < events.size()) {
      record.mask_sparsity[static_cast<std::size_t>(device)] = sparsity;
    }
  }
  record.device_accuracy.assign(events.size(), std::nan(""));
  score_round(record, measures.evaluation, measures.scope);
  return record;
}

void score_round(trace::RoundRecord& record, const Evaluation& evaluation, EvaluationScope scope) {
  const std::size_t ranks = record.device_accuracy.size();
  std::optional<Score> test;
  if (scope == EvaluationScope::per_device) {
    for (const auto& [device, score] : evaluation.devices) {
      if (device > 0 && static_cast<std::size_t>(device) < ranks) {
        record.device_accuracy[static_cast<std::size_t>(device)] = score.accuracy;
      }
    }
    if (!evaluation.devices.empty()) test = weighted_mean(evaluation.devices);
  } else if (evaluation.has_global) {
    test = evaluation.global;
  }
  record.test_loss = test ? test->loss : std::nan("");
  record.test_accuracy = test ? test->accuracy : std::nan("");
}

std::string progress_line(const trace::RoundRecord& r, int rounds, double elapsed_s) {
  const int done = r.round + 1;
  const double eta = elapsed_s / done * (rounds - done);
  std::string line = "round " + std::to_string(done) + "/" + std::to_string(rounds) +
                     format("  wall %.3f s", r.wall_s) +
                     format("  server idle %.1f%%", percent(r.idle_s.at(0), r.wall_s)) +
                     format("  device idle %.1f%%", 100.0 * mean_device_idle_fraction(r)) +
                     format("  up %.2f MB", static_cast<double>(r.bytes_up) / 1e6) +
                     format("  down %.2f MB", static_cast<double>(r.bytes_down) / 1e6);
  if (!std::isnan(r.test_accuracy)) line += format("  acc %.4f", r.test_accuracy);
  return line + format("  elapsed %.1f s", elapsed_s) + format("  ETA %.1f s", eta);
}

std::vector<std::pair<std::string, double>> summarize(const std::vector<trace::RoundRecord>& rounds) {
  double wall = 0, server_idle = 0, device_idle = 0, up = 0, down = 0;
  double accuracy = std::nan(""), best = std::nan("");
  for (const auto& r : rounds) {
    wall += r.wall_s;
    server_idle += r.idle_s.at(0);
    device_idle += mean_device_idle_fraction(r) * r.wall_s;
    up += static_cast<double>(r.bytes_up);
    down += static_cast<double>(r.bytes_down);
    if (!std::isnan(r.test_accuracy)) {
      accuracy = r.test_accuracy;
      best = std::isnan(best) ? accuracy : std::max(best, accuracy);
    }
  }
  const double n = static_cast<double>(rounds.size());
  const auto [server_flops, device_flops] = training_flops(rounds);
  return {{"rounds", n},
          {"total_wall_s", wall},
          {"mean_round_s", n > 0 ? wall / n : 0},
          {"server_idle_s", server_idle},
          {"server_idle_fraction", wall > 0 ? server_idle / wall : 0},
          {"mean_device_idle_s", device_idle},
          {"mean_device_idle_fraction", wall > 0 ? device_idle / wall : 0},
          {"bytes_up", up},
          {"bytes_down", down},
          {"server_flops", server_flops},
          {"device_flops", device_flops},
          {"final_test_accuracy", accuracy},
          {"best_test_accuracy", best}};
}

void print_summary(const std::string& method, const std::vector<trace::RoundRecord>& rounds,
                   const std::string& results_path, std::ostream& out) {
  out << "\nsummary (" << method << ", " << rounds.size() << " rounds)\n";
  out << std::setw(6) << "round" << std::setw(10) << "wall s" << std::setw(14) << "server idle%"
      << std::setw(14) << "device idle%" << std::setw(10) << "MB up" << std::setw(10) << "MB down"
      << std::setw(10) << "accuracy" << "\n";
  for (const auto& r : rounds) {
    out << std::setw(6) << r.round + 1 << std::setw(10) << format("%.3f", r.wall_s)
        << std::setw(14) << format("%.1f", percent(r.idle_s.at(0), r.wall_s)) << std::setw(14)
        << format("%.1f", 100.0 * mean_device_idle_fraction(r)) << std::setw(10)
        << format("%.2f", static_cast<double>(r.bytes_up) / 1e6) << std::setw(10)
        << format("%.2f", static_cast<double>(r.bytes_down) / 1e6) << std::setw(10)
        << (std::isnan(r.test_accuracy) ? std::string("-") : format("%.4f", r.test_accuracy))
        << "\n";
  }
  const auto [server_flops, device_flops] = training_flops(rounds);
  out << "training FLOPs: server " << format("%.4f", server_flops * 1e-12) << " TFLOP, devices "
      << format("%.4f", device_flops * 1e-12) << " TFLOP (all devices together)\n";
  out << "results: " << results_path << "\n";
}

}  // namespace cmlbed::train
