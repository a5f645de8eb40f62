// set_up and run_rounds, the second and third phases of a run (run_state.hpp): the links
// and the round context, then the rounds. Each round: agree whether to stop, train (timed), gather what each rank
// measured, evaluate, run the after-evaluation hooks, collect the events, and on rank 0
// record the round; then the after-recorded hooks.
#include <algorithm>
#include <cmath>
#include <iostream>

#include "cmlbed/base/interrupt.hpp"
#include "cmlbed/net/gather.hpp"
#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/wait_politely.hpp"
#include "cmlbed/run/emulation_verdict.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/trace/process_stats.hpp"
#include "cmlbed/trace/startup_clock.hpp"
#include "cmlbed/run/resume_rules.hpp"
#include "cmlbed/train/round_report.hpp"
#include "fidelity_sampler.hpp"
#include "round_loop.hpp"
#include "startup_report.hpp"

namespace cmlbed::run {
namespace {

std::map<int, net::LinkSpec> outgoing_links(const Settings& settings, int rank, int devices) {
  std::map<int, net::LinkSpec> links;
  if (rank == 0) {
    for (int device = 1; device <= devices; ++device) links[device] = link_spec(settings, device, LinkDirection::downlink);
  } else {
    links[0] = link_spec(settings, rank, LinkDirection::uplink);
  }
  return links;
}

// Every rank scores the model as it stands; rank 0 gets all scores. A stop asked for
// during it leaves the scores NaN (the round is complete, its score is not); the run
// stops at the next round boundary.
std::vector<std::vector<double>> evaluate_everywhere(RunState& run, const RoundContext& context) {
  std::optional<Evaluation> evaluation;
  try {
    evaluation = run.method->evaluate(context);
  } catch (const Interrupted&) {
  }
  // Ranks that scored nothing wait here without spinning a core, which the ones still
  // evaluating need (MPI_Gather would spin).
  net::barrier_politely(run.control.get());
  return net::gather_doubles(train::evaluation_to_doubles(evaluation ? &*evaluation : nullptr), run.control.get());
}

Evaluation merged(const std::vector<std::vector<double>>& evaluations) {
  std::vector<Evaluation> per_rank;
  for (const auto& values : evaluations) per_rank.push_back(train::evaluation_from_doubles(values));
  return merge_evaluations(per_rank);
}

// Resuming after a stop that came during the last kept round's evaluation: that round
// is in the file unscored, and every rank holds the weights after it, so it is scored
// now, as the uninterrupted run scored it (the same weights, the same test set).
void rescore_cut_short_round(RunState& run) {
  // A round that does not average is not scored either (aggregate_every > 1): NaN is its
  // score, not a sign of a stop.
  const sim::RoundSequence sequence = round_sequence(run.settings);
  const int last = run.first_round - 1;
  const bool scores = !sequence.averages || sim::averages_after(last, sequence.aggregate_every, run.rounds);
  std::int32_t unscored = run.is_server && scores && !run.records.empty() && run.records.back().round == last &&
                          std::isnan(run.records.back().test_loss);
  CMLBED_MPI_CHECK(MPI_Bcast(&unscored, 1, MPI_INT32_T, 0, run.control.get()));
  if (!unscored) return;
  run.transport->set_counting(false);  // its traffic is not the next round's
  const auto evaluations = evaluate_everywhere(run, run.context_of(last));
  run.transport->set_counting(true);
  if (!run.is_server) return;
  trace::RoundRecord& record = run.records.back();
  score_round(record, merged(evaluations), run.scope);
  run.results->replace_last_round(record);
  run.results->set_summary(train::summarize(run.records));
  run.results->flush();
  std::cout << "cmlbed: round " << run.first_round << " was stopped during its evaluation; scored now"
            << (std::isnan(record.test_accuracy) ? " (no score: stopped again)" : "") << std::endl;
}

// What every rank measured in a round, as rank 0 gathers it.
struct Gathered {
  std::vector<std::int64_t> starts, ends, evaluation_starts;
  // measured[r]: rank r's training FLOPs, then its fidelity figures (fidelity_values).
  std::vector<std::vector<double>> measured, evaluations, startups;
  std::vector<std::vector<trace::Event>> events;
  net::TransportStats moved;  // the server's counters before the evaluation's traffic
};

class RoundLoop {
 public:
  RoundLoop(RunState& run, const std::vector<RoundHook*>& hooks)
      : run_(run), hooks_(hooks), fidelity_(*run.timeline) {}

  Stop run() {
    for (int round = run_.first_round; round < run_.rounds; ++round) {
      if (const Stop stop = one_round(round); stop.signal != 0) return stop;
      for (RoundHook* hook : hooks_) hook->after_recorded(run_, round);
    }
    return {};
  }

 private:
  Stop one_round(int round) {
    const RoundContext context = run_.context_of(round);
    run_.flops = 0;
    const bool first = round == run_.first_round;
    // Memory at round 1 is read before the ranks meet: reading /proc takes milliseconds,
    // which must not delay one rank's start of the round.
    const trace::MemoryUse memory_at_start = first ? trace::memory_use() : trace::MemoryUse{};
    fidelity_.start();
    // A round boundary is a safe point: the ranks agree whether any was asked to stop.
    // Ranks that wait for the server (writing the last round) sleep in this agreement,
    // then meet in a plain barrier: all are there by then, so it spins for microseconds
    // and lets them leave together (the polite wait alone lets them trail by up to its
    // 1 ms backoff).
    if (const int signal = net::max_over_ranks(interrupt_signal(), run_.control.get()); signal != 0) {
      return {signal, round, false};
    }
    CMLBED_MPI_CHECK(MPI_Barrier(run_.control.get()));
    if (first) {
      trace::startup_clock().end(trace::StartupPhase::transport);
      startup_figures_ = startup_measures(memory_at_start);
    }
    Gathered gathered;
    if (const int signal = train(context, gathered); signal != 0) return {signal, round, true};
    evaluate(context, gathered);
    timeline().drain_into(drained_);
    gathered.events = net::gather_events(drained_, run_.control.get());
    // Start-up figures travel once, with the first round's, outside its timed work.
    if (first) gathered.startups = net::gather_doubles(startup_figures_, run_.control.get());
    if (run_.is_server) record(round, gathered);
    return {};
  }

  // The round's timed work; a signal that broke it off on any rank, else 0.
  int train(const RoundContext& context, Gathered& gathered) {
    const std::int64_t start = timeline().now_ns();
    int broken_by = 0;
    try {
      run_.method->run_round(context);
    } catch (const Interrupted& stop) {
      broken_by = stop.signal();  // unwound at a safe point inside the round
    }
    const std::int64_t end = timeline().now_ns();
    const RankFidelity fidelity = fidelity_.stop();
    // Whether every rank finished the round: a round one rank broke off is not recorded
    // (the peers it left blocked were asked to stop too: mpirun signals every rank).
    if (const int signal = net::max_over_ranks(broken_by, run_.control.get()); signal != 0) return signal;
    // The round spans from the first rank leaving the barrier to the last one done
    // training. Evaluation comes after it, on every rank: it is on the timeline (kind
    // evaluate) but not in the round's wall, busy or idle time or FLOPs, which measure
    // training alone.
    gathered.starts = net::gather_int64(start, run_.control.get());
    gathered.ends = net::gather_int64(end, run_.control.get());
    std::vector<double> measured{run_.flops};
    for (double value : fidelity_values(fidelity)) measured.push_back(value);
    gathered.measured = net::gather_doubles(measured, run_.control.get());
    return 0;
  }

  // The server's counters before any evaluation traffic (for output.timeline = false; a
  // send still completing is counted with the next round). What the evaluation and the
  // hooks move is no round's: the transport does not count it.
  void evaluate(const RoundContext& context, Gathered& gathered) {
    gathered.moved = run_.transport->stats();
    run_.transport->set_counting(false);
    const std::int64_t evaluation_start = timeline().now_ns();
    gathered.evaluations = evaluate_everywhere(run_, context);
    gathered.evaluation_starts = net::gather_int64(evaluation_start, run_.control.get());
    for (RoundHook* hook : hooks_) hook->after_evaluation(run_, context);
    run_.transport->set_counting(true);
  }

  // Rank 0: the round's row and events into the results file, flushed.
  void record(int round, const Gathered& gathered) {
    trace::ResultsFile& results = *run_.results;
    if (!gathered.startups.empty()) {
      write_startup(results, gathered.startups);
      if (run_.settings.output.progress) std::cout << startup_line(gathered.startups) << std::endl;
    }
    train::RoundMeasures measures;
    measures.scope = run_.scope;
    measures.evaluation_start_ns = gathered.evaluation_starts;
    const net::TransportStats& moved = gathered.moved;
    measures.counted = {moved.bytes_received - counted_.bytes_received, moved.bytes_sent - counted_.bytes_sent,
                        moved.messages_received - counted_.messages_received,
                        moved.messages_sent - counted_.messages_sent};
    counted_ = moved;
    std::vector<RankFidelity> fidelity;
    for (const auto& rank_measured : gathered.measured) {
      measures.flops.push_back(rank_measured.at(0));
      fidelity.push_back(fidelity_from_values(rank_measured, 1));
    }
    measures.evaluation = merged(gathered.evaluations);
    measures.mask_sparsity = run_.method->mask_sparsity();
    run_.records.push_back(train::make_round_record(round,
                                             *std::min_element(gathered.starts.begin(), gathered.starts.end()),
                                             *std::max_element(gathered.ends.begin(), gathered.ends.end()),
                                             gathered.events, run_.settings.output.timeline, measures));
    record_fidelity(run_.records.back(), fidelity, run_.placement);
    for (int r = 0; r < run_.mpi.size(); ++r) results.append_events(r, gathered.events[static_cast<std::size_t>(r)]);
    results.append_round(run_.records.back());
    results.set_summary(train::summarize(run_.records));
    write_emulation_verdict(results, run_.records, run_.placement);
    results.flush();
  }

  trace::Timeline& timeline() { return *run_.timeline; }

  RunState& run_;
  const std::vector<RoundHook*>& hooks_;
  std::vector<trace::Event> drained_;    // reused every round
  net::TransportStats counted_;          // the server's counters at the last round's end
  std::vector<double> startup_figures_;  // this rank's, taken as its first round starts
  FidelitySampler fidelity_;
};

}  // namespace

void set_up(RunState& run) {
  // The links start now, or, resuming, as long before now as they had run at the
  // checkpoint, so that rate traces go on where they were.
  run.links_start = run.timeline->now_ns() - (run.resume ? run.resume->elapsed_ns : 0);
  net::Transport& transport = run.transport.emplace(run.comm, *run.timeline,
                                                    outgoing_links(run.settings, run.rank, run.devices), run.links_start);
  run.scope = train::evaluation_scope(run.settings.evaluation.scope);
  const Settings& settings = run.settings;
  run.context_template.emplace(RoundContext{
      0, run.rank, run.devices, run.is_server ? 1.0 : settings.devices.slowdown.of(run.rank), transport,
      *run.timeline, settings.experiment.timeout, run.scope, run.flops,
      run.is_server ? 0.0 : settings.devices.flops.of(run.rank).value_or(0.0)});
  if (run.resuming && run.first_round > 0) rescore_cut_short_round(run);
}

Stop run_rounds(RunState& run, const std::vector<RoundHook*>& hooks) { return RoundLoop(run, hooks).run(); }

}  // namespace cmlbed::run
