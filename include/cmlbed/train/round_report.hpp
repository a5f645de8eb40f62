#pragma once
// Turns one round's events from every rank into the /rounds row, and prints progress
// and the end-of-run summary on rank 0.
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "cmlbed/train/evaluation.hpp"
#include "cmlbed/trace/event.hpp"

namespace cmlbed::train {

// Traffic of a round: up = devices -> server, down = server -> devices; payload bytes
// and messages.
struct RoundTraffic {
  std::int64_t bytes_up = 0;
  std::int64_t bytes_down = 0;
  std::int64_t messages_up = 0;
  std::int64_t messages_down = 0;
};

// What the driver gathered at the round's end besides the events.
struct RoundMeasures {
  RoundTraffic counted;       // the server's transport counters (used without a timeline)
  std::vector<double> flops;  // per rank
  Evaluation evaluation;      // every rank's, merged
  // When each rank entered the evaluation phase: its sends from then on are evaluation
  // traffic, not counted in the round's bytes and messages.
  std::vector<std::int64_t> evaluation_start_ns;
  EvaluationScope scope = EvaluationScope::global;
  std::map<int, double> mask_sparsity;  // by device rank (Method::mask_sparsity)
};

// Wall time is [start_ns, end_ns) in rank 0's time base; busy = union of each rank's
// compute intervals in it; traffic = the send events enqueued before the rank began
// evaluating. With the timeline off (`events`
// holds one empty list per rank) busy and idle are NaN, unknown, and the traffic is the
// server's transport counters. Test loss and accuracy: the global score, or in
// per-device scope the sample-weighted mean of the device scores, which also fill
// device_accuracy (NaN elsewhere).
trace::RoundRecord make_round_record(int round, std::int64_t start_ns, std::int64_t end_ns,
                                     const std::vector<std::vector<trace::Event>>& events,
                                     bool timeline_recorded, const RoundMeasures& measures);

// The record's scores (test_loss, test_accuracy, device_accuracy) from a merged
// evaluation; NaN where it has none.
void score_round(trace::RoundRecord& record, const Evaluation& evaluation, EvaluationScope scope);

// "round 3/10  wall 1.23 s  server idle 80.1%  device idle 12.0%  up 3.1 MB  down 3.1 MB
//  acc 0.812  elapsed 4.0 s  ETA 9.3 s"
std::string progress_line(const trace::RoundRecord& record, int rounds, double elapsed_s);

// Totals over the run: what /summary holds, name -> value.
std::vector<std::pair<std::string, double>> summarize(const std::vector<trace::RoundRecord>& rounds);

void print_summary(const std::string& method, const std::vector<trace::RoundRecord>& rounds,
                   const std::string& results_path, std::ostream& out);

}  // namespace cmlbed::train
