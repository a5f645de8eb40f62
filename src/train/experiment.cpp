#include "cmlbed/train/experiment.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include "cmlbed/base/heap_policy.hpp"
#include "cmlbed/base/interrupt.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/methods.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/net/clock_sync.hpp"
#include "cmlbed/net/gather.hpp"
#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/mpi_session.hpp"
#include "cmlbed/net/wait_politely.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/trace/checkpoint_file.hpp"
#include "cmlbed/trace/process_stats.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "cmlbed/trace/startup_clock.hpp"
#include "cmlbed/train/checkpoint.hpp"
#include "cmlbed/train/method_registry.hpp"
#include "cmlbed/train/resume_rules.hpp"
#include "cmlbed/train/round_report.hpp"
#include "cmlbed/version.hpp"
#include "paced_report.hpp"
#include "startup_report.hpp"

namespace cmlbed::train {
namespace {

std::map<int, net::LinkSpec> outgoing_links(const Config& config, int rank, int devices) {
  std::map<int, net::LinkSpec> links;
  if (rank == 0) {
    for (int device = 1; device <= devices; ++device) {
      links[device] = link_spec(config, device, LinkDirection::downlink);
    }
  } else {
    links[0] = link_spec(config, rank, LinkDirection::uplink);
  }
  return links;
}

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

// Rank 0, resuming: the rows kept (read before the file is opened for writing) and the
// file reopened at the checkpoint.
trace::ResultsFile reopen_results(const std::string& path, const ResumePoint& resume, const Config& config,
                                  std::vector<trace::RoundRecord>& records) {
  records = trace::ResultsFile::read_rounds(path);
  if (records.size() < resume.keep.rounds) {
    throw std::invalid_argument(path + " holds " + std::to_string(records.size()) + " rounds, fewer than its checkpoint (" +
                                std::to_string(resume.keep.rounds) + ")");
  }
  records.resize(resume.keep.rounds);
  trace::ResultsFile results =
      trace::ResultsFile::reopen(path, resume.keep, resume.rounds_complete, config.to_ini());
  if (!records.empty()) results.set_summary(summarize(records));
  results.flush();
  return results;
}

}  // namespace

trace::RunInfo run_info(const Config& config, const RunStamp& started, int mpi_size,
                        std::vector<std::string> hosts,
                        const std::vector<net::ClockEstimate>& clocks) {
  trace::RunInfo info;
  info.config_ini = config.to_ini();
  info.cmlbed_version = kVersion;
  info.git_revision = kGitRevision;
  info.method = config.text("experiment.method");
  info.started_at = started.iso;
  info.heap = heap_policy();
  info.mpi_size = mpi_size;
  info.hosts = std::move(hosts);
  for (const auto& clock : clocks) {
    info.clock_offsets_ns.push_back(clock.offset_ns);
    info.clock_uncertainty_ns.push_back(clock.uncertainty_ns);
  }
  return info;
}

RunStamp now_stamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char iso[32], compact[32];
  std::strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%SZ", &utc);
  std::strftime(compact, sizeof compact, "%Y%m%d-%H%M%S", &utc);
  return {iso, compact};
}

int run_experiment(const Config& config, const net::MpiSession& mpi, const std::string& output_file,
                   const RunStamp& started, RunStart mode,
                   const std::function<void(trace::ResultsFile&)>& on_created, Replanner* replanner) {
  const int rank = mpi.rank();
  const int devices = mpi.size() - 1;
  const bool is_server = rank == 0;
  const bool resuming = mode == RunStart::resume;
  const int compute_threads =
      static_cast<int>(config.integer(is_server ? "train.server_threads" : "train.device_threads"));
  model::set_intra_op_threads(compute_threads);
  net::DuplicatedComm control(MPI_COMM_WORLD);  // barriers and gathers, never data
  trace::StartupClock& startup = trace::startup_clock();
  startup.end(trace::StartupPhase::libtorch);

  // The method first (it loads and partitions the data), before any file exists: data
  // that cannot be split as configured (more devices than samples, say) is a
  // configuration error, which every rank meets alike and reports as one (exit 2).
  std::unique_ptr<Method> method;
  std::optional<std::string> error;
  try {
    method = make_method(config, rank, devices);
  } catch (const std::invalid_argument& e) {
    error = e.what();
  }
  error = net::agree_on_error(error, control.get());
  if (error) throw ConfigError(*error);
  startup.end(trace::StartupPhase::model);

  const int rounds = static_cast<int>(config.integer("experiment.rounds"));
  const std::string& method_name = config.text("experiment.method");
  // A re-planned run's parts no longer match its stored configuration's split points, so
  // a checkpoint of it could not be loaded: it keeps none (yet).
  const bool resumable = method_traits(method_name).checkpointable && replanner == nullptr;
  const std::int64_t checkpoint_every = resumable ? config.integer("output.checkpoint") : 0;
  if (is_server && replanner != nullptr && config.integer("output.checkpoint") > 0) {
    std::cerr << "cmlbed: note: plan.replan = on_change: no checkpoints are written (a re-planned run cannot be "
                 "resumed yet); every completed round is in the results file all the same" << std::endl;
  } else if (is_server && !resumable && config.user_set("output.checkpoint") && config.integer("output.checkpoint") > 0) {
    std::cerr << "cmlbed: note: method " << method_name
              << " does not save checkpoints; output.checkpoint is ignored" << std::endl;
  }

  if (const std::vector<int> raw = devices_uploading_raw_samples(config, devices); is_server && !raw.empty()) {
    std::cerr << "cmlbed: note: " << method_name << " at split 0 on " << raw.size() << " of " << devices
              << " device(s): " << kRawDataMark
              << " (every layer runs on the server: centralised training, not split learning)" << std::endl;
  }

  // Resuming: every rank takes its state from the checkpoint (rank 0 reads the file),
  // before the clocks are set and anything is timed.
  std::optional<ResumePoint> resume;
  std::string file_started_at = started.iso;  // what ties checkpoints to the results file
  if (resuming) {
    if (!resumable) {
      throw ConfigError("cannot resume " + output_file + ": method " + method_name +
                        " does not save checkpoints");
    }
    if (is_server) {
      try {
        file_started_at = trace::ResultsFile::read_string_attribute(output_file, "started_at");
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    error = net::agree_on_error(error, control.get());
    if (error) throw ConfigError(*error);
    resume = load_checkpoint(*method, output_file, file_started_at, mpi.size(), control.get());
    if (resume->rounds_complete > rounds) {
      throw ConfigError("cannot resume " + output_file + " with experiment.rounds = " + std::to_string(rounds) +
                        ": its checkpoint is after round " + std::to_string(resume->rounds_complete));
    }
    // Another round count must not change what the rounds so far computed (the file
    // still holds the configuration of the start that ran them).
    if (is_server) {
      try {
        const Config stored = Config::resolve(
            parse_ini_settings(trace::ResultsFile::read_string_attribute(output_file, "config"), output_file), {});
        error = changed_rounds_error(stored, config, resume->rounds_complete, output_file);
      } catch (const std::exception& e) {
        error = "cannot resume " + output_file + ": " + e.what();
      }
    }
    error = net::agree_on_error(error, control.get());
    if (error) throw ConfigError(*error);
  }
  const int first_round = resume ? resume->rounds_complete : 0;

  const net::ClockEstimate clock = net::synchronize_clocks(control.get());
  startup.end(trace::StartupPhase::clocks);
  trace::Timeline timeline(clock.offset_ns);
  timeline.set_enabled(config.flag("output.timeline"));
  // A slowdown stretches the stage's CPU time where one thread does all of its work.
  timeline.set_stretch_basis(compute_threads == 1 ? trace::Timeline::StretchBasis::thread_cpu
                                                  : trace::Timeline::StretchBasis::wall);
  const auto clocks = net::gather_clock_estimates(clock, control.get());
  auto hosts = net::gather_host_names(control.get());
  if (resume && resume->from_checkpoint) {
    // The run's time base goes on from the checkpoint even when this start's clock is
    // behind the one that wrote it (another node, a reboot): no event of a later round
    // is ever earlier than one of an earlier round.
    std::int64_t shift = is_server ? std::max<std::int64_t>(0, resume->time_ns - timeline.now_ns()) : 0;
    CMLBED_MPI_CHECK(MPI_Bcast(&shift, 1, MPI_INT64_T, 0, control.get()));
    timeline.set_offset_ns(timeline.offset_ns() + shift);
  }

  std::vector<trace::RoundRecord> records;
  std::optional<trace::ResultsFile> results;
  if (is_server && !resuming) {
    results.emplace(output_file, config.flag("output.overwrite"),
                    run_info(config, started, mpi.size(), std::move(hosts), clocks));
    // A checkpoint next to a file this run has just replaced is another run's.
    trace::remove_checkpoint(trace::checkpoint_path(output_file));
    if (on_created) on_created(*results);
  }
  if (resuming) {
    if (is_server) {
      try {
        results.emplace(reopen_results(output_file, *resume, config, records));
        if (on_created) on_created(*results);
      } catch (const std::exception& e) {
        error = "cannot resume " + output_file + ": " + e.what();
      }
    }
    error = net::agree_on_error(error, control.get());
    if (error) throw ConfigError(*error);
    if (is_server) {
      std::cout << "cmlbed: resuming " << output_file
                << (resume->from_checkpoint ? " after round " + std::to_string(first_round) + " of " +
                                                  std::to_string(rounds) + " (checkpoint of " +
                                                  resume->written_at + ")"
                                            : std::string(" from its start (no checkpoint)"))
                << std::endl;
    }
  }
  startup.end(trace::StartupPhase::results_file);
  // The links start now, or, resuming, as long before now as they had run at the
  // checkpoint, so that rate traces go on where they were.
  const std::int64_t links_start = timeline.now_ns() - (resume ? resume->elapsed_ns : 0);
  net::Transport transport(MPI_COMM_WORLD, timeline, outgoing_links(config, rank, devices), links_start);
  const CheckpointTarget checkpoint_target{is_server ? &*results : nullptr, config.to_ini(), file_started_at};
  int checkpointed = first_round;  // rounds complete at the last checkpoint this run can continue from
  const auto checkpoint = [&](int rounds_complete) {
    write_checkpoint(*method, rounds_complete, timeline.now_ns(), timeline.now_ns() - links_start,
                     checkpoint_target, control.get());
    checkpointed = rounds_complete;
  };

  const EvaluationScope scope = evaluation_scope(config.text("evaluation.scope"));
  double flops = 0;  // this rank's, in the current round
  const RoundContext context_template{0,         rank,      devices,
                                      is_server ? 1.0 : config.real("devices.slowdown", rank),
                                      transport, timeline,  std::chrono::nanoseconds(config.duration_ns("experiment.timeout")),
                                      scope,     flops,
                                      is_server ? 0.0 : config.compute_rate_flops("devices.flops", rank).value_or(0.0)};
  std::vector<trace::Event> drained;  // reused every round
  net::TransportStats counted;        // the server's counters at the last round's end
  // Every rank scores the model as it stands; rank 0 gets all scores. A stop asked for
  // during it leaves the scores NaN (the round is complete, its score is not); the run
  // stops at the next round boundary.
  const auto evaluate_everywhere = [&](const RoundContext& context) {
    std::optional<Evaluation> evaluation;
    try {
      evaluation = method->evaluate(context);
    } catch (const Interrupted&) {
    }
    // Ranks that scored nothing wait here without spinning a core, which the ones still
    // evaluating need (MPI_Gather would spin).
    net::barrier_politely(control.get());
    return net::gather_doubles(evaluation_to_doubles(evaluation ? &*evaluation : nullptr), control.get());
  };
  const auto merged = [](const std::vector<std::vector<double>>& evaluations) {
    std::vector<Evaluation> per_rank;
    for (const auto& values : evaluations) per_rank.push_back(evaluation_from_doubles(values));
    return merge_evaluations(per_rank);
  };
  // Resuming after a stop that came during the last kept round's evaluation: that round
  // is in the file unscored, and every rank holds the weights after it, so it is scored
  // now, as the uninterrupted run scored it (the same weights, the same test set).
  if (resuming && first_round > 0) {
    // A round that does not average is not scored either (aggregate_every > 1): NaN is its
    // score, not a sign of a stop.
    const plan::RoundSequence sequence = round_sequence(config);
    const bool scores = !sequence.averages || plan::averages_after(first_round - 1, sequence.aggregate_every, rounds);
    std::int32_t unscored = is_server && scores && !records.empty() && records.back().round == first_round - 1 &&
                            std::isnan(records.back().test_loss);
    CMLBED_MPI_CHECK(MPI_Bcast(&unscored, 1, MPI_INT32_T, 0, control.get()));
    if (unscored) {
      RoundContext context = context_template;
      context.round = first_round - 1;
      transport.set_counting(false);  // its traffic is not the next round's
      const auto evaluations = evaluate_everywhere(context);
      transport.set_counting(true);
      if (is_server) {
        score_round(records.back(), merged(evaluations), scope);
        results->replace_last_round(records.back());
        results->set_summary(summarize(records));
        results->flush();
        std::cout << "cmlbed: round " << first_round << " was stopped during its evaluation; scored now"
                  << (std::isnan(records.back().test_accuracy) ? " (no score: stopped again)" : "") << std::endl;
      }
    }
  }
  const std::int64_t run_start = links_start;
  std::vector<double> startup_figures;  // this rank's, taken as its first round starts
  int stopped_by = 0;       // the signal all ranks agreed to stop for (SIGTERM, SIGINT)
  int stopped_in = rounds;  // the round it stopped (was not recorded)
  bool mid_round = false;   // stopped inside the round, or at its start
  for (int round = first_round; round < rounds; ++round) {
    RoundContext context = context_template;
    context.round = round;
    flops = 0;
    // A round boundary is a safe point: the ranks agree whether any was asked to stop.
    // Ranks that wait for the server (writing the last round) sleep in this agreement,
    // then meet in a plain barrier: all are there by then, so it spins for microseconds
    // and lets them leave together (the polite wait alone lets them trail by up to its
    // 1 ms backoff).
    // Memory at round 1 is read before the ranks meet: reading /proc takes milliseconds,
    // which must not delay one rank's start of the round.
    const trace::MemoryUse memory_at_start = round == first_round ? trace::memory_use() : trace::MemoryUse{};
    if ((stopped_by = net::max_over_ranks(interrupt_signal(), control.get())) != 0) {
      stopped_in = round;
      break;
    }
    CMLBED_MPI_CHECK(MPI_Barrier(control.get()));
    if (round == first_round) {
      startup.end(trace::StartupPhase::transport);
      startup_figures = startup_measures(memory_at_start);
    }
    const std::int64_t start = timeline.now_ns();
    int broken_by = 0;
    try {
      method->run_round(context);
    } catch (const Interrupted& stop) {
      broken_by = stop.signal();  // unwound at a safe point inside the round
    }
    const std::int64_t end = timeline.now_ns();
    // Whether every rank finished the round: a round one rank broke off is not recorded
    // (the peers it left blocked were asked to stop too: mpirun signals every rank).
    if ((stopped_by = net::max_over_ranks(broken_by, control.get())) != 0) {
      stopped_in = round;
      mid_round = true;
      break;
    }
    // The round spans from the first rank leaving the barrier to the last one done
    // training. Evaluation comes after it, on every rank: it is on the timeline (kind
    // evaluate) but not in the round's wall, busy or idle time or FLOPs, which measure
    // training alone.
    const auto starts = net::gather_int64(start, control.get());
    const auto ends = net::gather_int64(end, control.get());
    const auto round_flops = net::gather_doubles({flops}, control.get());
    // The server's counters before any evaluation traffic (for output.timeline = false;
    // a send still completing is counted with the next round). What the evaluation and a
    // re-split move is no round's: the transport does not count it.
    const net::TransportStats moved = transport.stats();
    transport.set_counting(false);
    const std::int64_t evaluation_start = timeline.now_ns();
    const auto evaluations = evaluate_everywhere(context);
    const auto evaluation_starts = net::gather_int64(evaluation_start, control.get());
    // Re-planning, outside the timed work; a re-split's transfers go with this round's
    // events (after its end, like the evaluation's).
    bool replan_checked = false;
    if (replanner != nullptr) {
      const Replanner::Outcome outcome = replanner->after_round(round, timeline.now_ns() - links_start, control.get());
      replan_checked = outcome.checked;
      try {
        if (outcome.adopted) method->apply_plan(context, *outcome.adopted);
      } catch (const Interrupted&) {
        // Asked to stop while re-splitting: every rank was signalled, so the run stops at
        // the next round boundary, with this round recorded.
      }
    }
    transport.set_counting(true);
    // Outside the timed work: ship this round's events to rank 0, which appends them.
    timeline.drain_into(drained);
    const auto events = net::gather_events(drained, control.get());
    // Start-up figures travel once, with the first round's, outside its timed work.
    std::vector<std::vector<double>> startups;
    if (round == first_round) startups = net::gather_doubles(startup_figures, control.get());
    if (is_server) {
      if (round == first_round) {
        write_startup(*results, startups);
        if (config.flag("output.progress")) std::cout << startup_line(startups) << std::endl;
      }
      RoundMeasures measures;
      measures.scope = scope;
      measures.evaluation_start_ns = evaluation_starts;
      measures.counted = {moved.bytes_received - counted.bytes_received, moved.bytes_sent - counted.bytes_sent,
                          moved.messages_received - counted.messages_received,
                          moved.messages_sent - counted.messages_sent};
      counted = moved;
      for (const auto& rank_flops : round_flops) measures.flops.push_back(rank_flops.at(0));
      measures.evaluation = merged(evaluations);
      measures.mask_sparsity = method->mask_sparsity();
      records.push_back(make_round_record(round, *std::min_element(starts.begin(), starts.end()),
                                          *std::max_element(ends.begin(), ends.end()), events,
                                          config.flag("output.timeline"), measures));
      for (int r = 0; r < mpi.size(); ++r) results->append_events(r, events[static_cast<std::size_t>(r)]);
      results->append_round(records.back());
      if (replan_checked) results->write_replans(replanner->table());
      results->set_summary(summarize(records));
      results->flush();
      if (config.flag("output.progress")) {
        std::cout << progress_line(records.back(), rounds,
                                   static_cast<double>(timeline.now_ns() - run_start) * 1e-9)
                  << std::endl;
      }
    }
    // After every checkpoint_every rounds and the last: the round is in the file, and
    // every rank's state is the one after it.
    const int done = round + 1;
    if (checkpoint_every > 0 && (done % checkpoint_every == 0 || done == rounds)) checkpoint(done);
  }
  if (stopped_by != 0) {
    // Every completed round is in the file already (flushed as it ended). Stopped at a
    // round boundary, every rank's state is the one after the last round: keep it too.
    if (!mid_round && checkpoint_every > 0 && checkpointed < stopped_in) checkpoint(stopped_in);
    if (is_server) {
      results->mark_interrupted(signal_name(stopped_by), stopped_in);
      results->close();
      std::cerr << "cmlbed: interrupted by " << signal_name(stopped_by) << (mid_round ? " during" : " before")
                << " round " << stopped_in + 1 << " of " << rounds << "; " << output_file << " keeps "
                << rounds_text(stopped_in) << continuation(output_file, resumable, stopped_in, checkpointed)
                << std::endl;
    }
    return 128 + stopped_by;
  }
  // Each rank's peak resident memory over the whole run, its share of the machine's
  // memory at the end, and how its paced stages (devices.flops) kept their lengths.
  const trace::MemoryUse memory = trace::memory_use();
  const trace::Timeline::PaceStats pace = timeline.pace_stats();
  const auto at_end = net::gather_doubles(
      {static_cast<double>(memory.peak_rss_bytes), static_cast<double>(memory.pss_bytes),
       static_cast<double>(pace.paced), static_cast<double>(pace.overran), static_cast<double>(pace.overrun_ns) * 1e-9,
       pace.worst_ratio},
      control.get());
  if (is_server) {
    std::vector<double> peak_bytes, pss_bytes;
    for (const auto& figures : at_end) {
      peak_bytes.push_back(figures.at(0) < 0 ? std::nan("") : figures.at(0));
      pss_bytes.push_back(figures.at(1) < 0 ? std::nan("") : figures.at(1));
    }
    results->write_process_measure("peak_rss_bytes", peak_bytes);
    results->write_process_measure("pss_at_end_bytes", pss_bytes);
    const PacedStages paced = paced_stages(at_end, 2);
    if (paced.any()) write_paced_stages(*results, paced);
    for (const auto& [name, weights] : method->final_state()) results->write_model(name, weights);
    results->close();
    print_summary(method_name, records, output_file, std::cout);
    if (paced.any()) std::cout << paced_line(paced) << std::endl;
  }
  net::barrier_politely(control.get());
  return 0;
}

}  // namespace cmlbed::train
