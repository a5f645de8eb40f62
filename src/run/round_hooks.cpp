#include "round_hooks.hpp"

#include <iostream>

#include "cmlbed/base/interrupt.hpp"
#include "cmlbed/run/emulation_verdict.hpp"
#include "cmlbed/train/round_report.hpp"

namespace cmlbed::run {

void ReplanHook::after_evaluation(RunState& run, const RoundContext& context) {
  // A re-split's transfers go with this round's events (after its end, like the
  // evaluation's).
  const PlanChanges::Outcome outcome =
      replanner_.after_round(context.round, run.timeline->now_ns() - run.links_start, run.control.get());
  checked_ = outcome.checked;
  try {
    if (outcome.adopted) run.method->apply_plan(context, *outcome.adopted);
  } catch (const Interrupted&) {
    // Asked to stop while re-splitting: every rank was signalled, so the run stops at the
    // next round boundary, with this round recorded.
  }
}

void ReplanHook::after_recorded(RunState& run, int /*round*/) {
  if (!run.is_server || !checked_) return;
  train::write_replans(*run.results, replanner_.table());
  run.results->flush();
}

void ProgressPrinter::after_recorded(RunState& run, int /*round*/) {
  if (!run.is_server || !run.settings.output.progress) return;
  const trace::RoundRecord& record = run.records.back();
  std::cout << train::progress_line(record, run.rounds,
                             static_cast<double>(run.timeline->now_ns() - run.links_start) * 1e-9)
            << std::endl;
  // A round whose times are the host's says so under its line.
  if (record.emulation > 0) {
    std::cout << "  emulation " << judge_emulation(fidelity_of(record), record.wall_s, run.placement).text()
              << std::endl;
  }
}

Checkpointer::Checkpointer(RunState& run)
    : target_{run.is_server ? &*run.results : nullptr, run.settings.config().to_ini(), run.file_started_at},
      checkpointed_(run.first_round) {}

void Checkpointer::after_recorded(RunState& run, int round) {
  const int done = round + 1;
  if (run.checkpoint_every > 0 && (done % run.checkpoint_every == 0 || done == run.rounds)) write(run, done);
}

void Checkpointer::on_stop(RunState& run, int stopped_in, bool mid_round) {
  if (!mid_round && run.checkpoint_every > 0 && checkpointed_ < stopped_in) write(run, stopped_in);
}

void Checkpointer::write(RunState& run, int rounds_complete) {
  const std::int64_t now = run.timeline->now_ns();
  write_checkpoint(*run.method, rounds_complete, now, now - run.links_start, target_, run.control.get());
  checkpointed_ = rounds_complete;
}

}  // namespace cmlbed::run
