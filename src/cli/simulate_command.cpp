// `cmlbed simulate`: a run of a simulatable method (config/methods.hpp) predicted by the schedule simulator from
// a profile (given, or measured here first), written as an ordinary results file.
#include <boost/program_options.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <string>

#include "cmlbed/base/parse_integer.hpp"
#include "cmlbed/config/settings.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/methods.hpp"
#include "cmlbed/config/option_table.hpp"
#include "cmlbed/sim/schedule_simulator.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/setup/validate.hpp"
#include "cmlbed/trace/event_totals.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "cmlbed/run/experiment.hpp"
#include "cmlbed/planner/parameter_search.hpp"
#include "cmlbed/planner/profiler.hpp"
#include "cmlbed/planner/replanning.hpp"
#include "cmlbed/train/round_report.hpp"
#include "cmlbed/planner/simulation_setup.hpp"
#include "cmlbed/planner/auto_plan.hpp"
#include "commands.hpp"
#include "simulation_arguments.hpp"

namespace po = boost::program_options;

namespace cmlbed::cli {
namespace {

// plan.replan = on_change, as the run re-plans: after each round (its evaluation
// included, i.e. at the next round's start on the links' clock) the planner checks the
// links' rates; a plan it adopts cuts the devices from the next round on, and the rounds
// are simulated again with it (the rounds before it do not change). Left out: the time
// the run's planning and re-split take between the rounds.
std::vector<sim::SimulatedRound> simulate_replanning(const planner::PlanSpec& spec, const sim::Profile& profile,
                                                      const std::vector<std::size_t>& samples,
                                                      sim::SimulationInput& input, planner::Replanner& replanner) {
  std::vector<sim::SimulatedRound> rounds = sim::simulate(input);
  for (int r = 0; r + 1 < static_cast<int>(rounds.size()); ++r) {
    const planner::Replanner::Outcome outcome = replanner.check(r, rounds[static_cast<std::size_t>(r) + 1].start_ns);
    if (!outcome.adopted) continue;
    input.later_plans.push_back({r + 1, planner::plan_input(spec, profile, samples, *outcome.adopted).devices});
    rounds = sim::simulate(input);
  }
  return rounds;
}

int simulate(const Settings& settings, const SimulateArguments& args, const sim::Profile& profile,
             const SimulationChoice& chosen, const run::RunStamp& started) {
  const int devices = *args.devices;
  const auto began = std::chrono::steady_clock::now();
  const planner::PlanSpec spec = planner::plan_spec(settings, devices);
  const planner::SampleCounts samples = planner::sample_counts(settings, devices);
  sim::SimulationInput input = planner::simulation_input(spec, profile, samples.devices);
  input.evaluation_s = planner::evaluation_seconds(spec, profile, samples.test, devices);
  std::optional<planner::Replanner> replanner;
  if (chosen.table && spec.replans) {
    replanner.emplace(spec, /*is_server=*/true, profile, chosen.freedom, chosen.plan, samples.devices);
  }
  const std::vector<sim::SimulatedRound> rounds =
      replanner ? simulate_replanning(spec, profile, samples.devices, input, *replanner) : sim::simulate(input);

  std::int64_t events = 0;
  std::vector<std::int64_t> per_rank(static_cast<std::size_t>(devices + 1), 0);
  for (const sim::SimulatedRound& round : rounds) {
    for (std::size_t r = 0; r < per_rank.size(); ++r) per_rank[r] += static_cast<std::int64_t>(round.events[r].size());
  }
  for (const std::int64_t n : per_rank) events += n;
  const bool totals = args.events == "totals" || (args.events == "auto" && events > kMostEventsKept);

  const std::string path = settings.output.file;
  trace::RunInfo info =
      run::run_info(settings, started, devices + 1, {}, std::vector<net::ClockEstimate>(static_cast<std::size_t>(devices + 1)));
  info.event_detail = totals ? trace::EventDetail::totals : trace::EventDetail::all;
  if (!totals) info.expected_events = per_rank;
  trace::ResultsFile results(path, settings.output.overwrite, info);
  results.mark_simulated(sim::to_json(profile).dump());
  if (chosen.table) planner::write_plan(results, *chosen.table);
  if (replanner && !replanner->table().round.empty()) train::write_replans(results, replanner->table());
  std::vector<trace::RoundRecord> records;
  for (const sim::SimulatedRound& round : rounds) {
    train::RoundMeasures measures;
    measures.flops = round.flops;
    records.push_back(train::make_round_record(round.round, round.start_ns, round.end_ns, round.events, true, measures));
    if (totals) {
      std::vector<trace::EventTotal> sums;
      for (int r = 0; r <= devices; ++r) {
        const std::vector<trace::EventTotal> rank_sums = trace::event_totals(r, round.events[static_cast<std::size_t>(r)]);
        sums.insert(sums.end(), rank_sums.begin(), rank_sums.end());
      }
      results.append_event_totals(sums);
    } else {
      for (int r = 0; r <= devices; ++r) results.append_events(r, round.events[static_cast<std::size_t>(r)]);
    }
    results.append_round(records.back());
  }
  results.set_summary(train::summarize(records));
  results.close();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  train::print_summary(settings.experiment.method + ", simulated", records, path, std::cout);
  if (totals) {
    std::cout << "events: " << events << " summed per rank, round, lane, kind and message (/event_totals; "
              << (args.events == "auto" ? "more than " + std::to_string(kMostEventsKept) + " events; " : std::string())
              << "--events all keeps every one)" << std::endl;
  }
  std::cout << "simulated " << devices << " devices, " << rounds.size() << " rounds in " << took << " s; host: "
            << spec.host_text << std::endl;
  return 0;
}

}  // namespace

int simulate_command(int argc, char** argv) {
  const run::RunStamp started = run::now_stamp();
  SimulateArguments args;
  return report_errors([&] {
    args = parse_simulate_arguments("simulate", argc, argv);
    if (args.help) {
      std::cout << "Usage: cmlbed simulate --config FILE [--profile PROFILE.json] [--devices N] [--events all|totals|auto] "
                   "[--section.key=value ...]\n"
                   "Predicts the run's rounds ("
                << method_list(&MethodTraits::simulatable)
                << ") with the schedule simulator,\n"
                   "without mpirun, and writes them as a results file (root attribute simulated = 1;\n"
                   "docs/explanation/simulator.md). model.split / pipar.micro_batches = auto: the planner's choice\n"
                   "from the same profile, as `cmlbed run` makes it, and with plan.replan = on_change\n"
                   "made again between rounds when a rate trace has moved a link, as the run does.\n\n"
                << simulate_options("simulate") << "\n"
                << config_options_description();
      return 0;
    }
    // With auto: the settings' profile, then the planner's choice from it, as `cmlbed
    // run` makes it before round 1.
    const Settings settings = simulation_settings(args, started.compact, /*check_output=*/true);
    planner::refuse_replan_without_auto(settings, *args.devices);
    const sim::Profile profile = simulation_profile(settings, args, "simulate");
    const SimulationChoice chosen = simulation_choice(settings, profile, *args.devices);
    return simulate(chosen.settings, args, profile, chosen, started);
  });
}

}  // namespace cmlbed::cli
