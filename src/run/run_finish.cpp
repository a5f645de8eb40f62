// Phase 4 of a run (run_state.hpp): a stopped run's note, or a complete run's end-of-run
// figures, final model and summary.
#include <cmath>
#include <iostream>

#include "cmlbed/base/interrupt.hpp"
#include "cmlbed/net/gather.hpp"
#include "cmlbed/net/wait_politely.hpp"
#include "cmlbed/run/emulation_verdict.hpp"
#include "cmlbed/trace/process_stats.hpp"
#include "cmlbed/train/round_report.hpp"
#include "paced_report.hpp"
#include "round_loop.hpp"

namespace cmlbed::run {
namespace {

std::string rounds_text(int rounds) {
  return rounds == 0 ? std::string("no round") : rounds == 1 ? std::string("round 1")
                                                             : "rounds 1-" + std::to_string(rounds);
}

// What the interrupted line says about continuing: the file keeps `kept` rounds, the
// last checkpoint is after `checkpointed` of them.
std::string continuation(const std::string& file, bool resumable, int kept, int checkpointed) {
  if (!resumable) return "";
  const std::string command = "cmlbed run --resume " + file;
  if (checkpointed == kept) return "; continue with `" + command + "`";
  if (checkpointed == 0) return "; `" + command + "` starts it over (no checkpoint)";
  return "; `" + command + "` continues after round " + std::to_string(checkpointed) + " (the last checkpoint)";
}

// Every completed round is in the file already (flushed as it ended).
int finish_stopped(RunState& run, const Stop& stop, Checkpointer& checkpointer) {
  checkpointer.on_stop(run, stop.round, stop.mid_round);
  if (run.is_server) {
    run.results->mark_interrupted(signal_name(stop.signal), stop.round);
    run.results->close();
    std::cerr << "cmlbed: interrupted by " << signal_name(stop.signal) << (stop.mid_round ? " during" : " before")
              << " round " << stop.round + 1 << " of " << run.rounds << "; " << run.output_file << " keeps "
              << rounds_text(stop.round)
              << continuation(run.output_file, run.resumable, stop.round, checkpointer.checkpointed()) << std::endl;
  }
  return 128 + stop.signal;
}

// Each rank's peak resident memory over the whole run, its share of the machine's memory
// at the end, and how its paced stages (devices.flops) kept their lengths.
int finish_complete(RunState& run) {
  const trace::MemoryUse memory = trace::memory_use();
  const trace::Timeline::PaceStats pace = run.timeline->pace_stats();
  const auto at_end = net::gather_doubles(
      {static_cast<double>(memory.peak_rss_bytes), static_cast<double>(memory.pss_bytes),
       static_cast<double>(pace.paced), static_cast<double>(pace.overran), static_cast<double>(pace.overrun_ns) * 1e-9,
       pace.worst_ratio},
      run.control.get());
  if (run.is_server) {
    trace::ResultsFile& results = *run.results;
    std::vector<double> peak_bytes, pss_bytes;
    for (const auto& figures : at_end) {
      peak_bytes.push_back(figures.at(0) < 0 ? std::nan("") : figures.at(0));
      pss_bytes.push_back(figures.at(1) < 0 ? std::nan("") : figures.at(1));
    }
    results.write_process_measure("peak_rss_bytes", peak_bytes);
    results.write_process_measure("pss_at_end_bytes", pss_bytes);
    const PacedStages paced = paced_stages(at_end, 2);
    if (paced.any()) write_paced_stages(results, paced);
    for (const auto& [name, weights] : run.method->final_state()) results.write_model(name, weights);
    results.close();
    train::print_summary(run.settings.experiment.method, run.records, run.output_file, std::cout);
    if (paced.any()) std::cout << paced_line(paced) << std::endl;
    std::cout << "emulation: " << run_emulation_verdict(run.records, run.placement).text() << " (" << run.placement
              << ")" << std::endl;
  }
  net::barrier_politely(run.control.get());
  return 0;
}

}  // namespace

int finish(RunState& run, const Stop& stop, Checkpointer& checkpointer) {
  return stop.signal != 0 ? finish_stopped(run, stop, checkpointer) : finish_complete(run);
}

}  // namespace cmlbed::run
