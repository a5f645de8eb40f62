// `cmlbed simulate`: a run of fl, sl, sfl or pipar predicted by the schedule simulator from
// a profile (given, or measured here first), written as an ordinary results file.
#include <boost/program_options.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <string>

#include "cmlbed/base/parse_integer.hpp"
#include "cmlbed/config/config.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/option_table.hpp"
#include "cmlbed/plan/schedule_simulator.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/setup/validate.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "cmlbed/train/experiment.hpp"
#include "cmlbed/train/profiler.hpp"
#include "cmlbed/train/round_report.hpp"
#include "cmlbed/train/simulation_setup.hpp"
#include "commands.hpp"
#include "simulation_arguments.hpp"

namespace po = boost::program_options;

namespace cmlbed::cli {
namespace {

int simulate(const Config& config, const SimulateArguments& args, const plan::Profile& profile,
             const std::optional<trace::ResultsFile::PlanTable>& plan, const train::RunStamp& started) {
  const int devices = *args.devices;
  const auto began = std::chrono::steady_clock::now();
  const train::SampleCounts samples = train::sample_counts(config, devices);
  plan::SimulationInput input = train::simulation_input(config, profile, samples.devices);
  input.evaluation_s = train::evaluation_seconds(config, profile, samples.test, devices);
  const std::vector<plan::SimulatedRound> rounds = plan::simulate(input);

  const std::string path = config.text("output.file");
  trace::ResultsFile results(path, config.flag("output.overwrite"), train::run_info(config, started, devices + 1, {}, std::vector<net::ClockEstimate>(static_cast<std::size_t>(devices + 1))));
  results.mark_simulated(plan::to_json(profile).dump());
  if (plan) results.write_plan(*plan);
  std::vector<trace::RoundRecord> records;
  for (const plan::SimulatedRound& round : rounds) {
    train::RoundMeasures measures;
    measures.flops = round.flops;
    records.push_back(train::make_round_record(round.round, round.start_ns, round.end_ns, round.events, true, measures));
    for (int r = 0; r <= devices; ++r) results.append_events(r, round.events[static_cast<std::size_t>(r)]);
    results.append_round(records.back());
  }
  results.set_summary(train::summarize(records));
  results.close();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  train::print_summary(config.text("experiment.method") + ", simulated", records, path, std::cout);
  std::cout << "simulated " << devices << " devices, " << rounds.size() << " rounds in " << took << " s" << std::endl;
  return 0;
}

}  // namespace

int simulate_command(int argc, char** argv) {
  const train::RunStamp started = train::now_stamp();
  SimulateArguments args;
  return report_errors([&] {
    args = parse_simulate_arguments("simulate", argc, argv);
    if (args.help) {
      std::cout << "Usage: cmlbed simulate --config FILE [--profile PROFILE.json] [--devices N] "
                   "[--section.key=value ...]\n"
                   "Predicts the run's rounds (fl, sl, sfl, pipar) with the schedule simulator, without\n"
                   "mpirun, and writes them as a results file (root attribute simulated = 1;\n"
                   "docs/planning.md). model.split / pipar.micro_batches = auto: the planner's choice\n"
                   "from the same profile, as `cmlbed run` makes it (plan.replan is not simulated).\n\n"
                << simulate_options("simulate") << "\n"
                << config_options_description();
      return 0;
    }
    // With auto: a probe configuration (placeholders) to profile, then the planner's
    // choice from that profile, as `cmlbed run` makes it before round 1.
    const Config probe = simulation_config(args, started.compact, /*check_output=*/true);
    const plan::Profile profile = simulation_profile(probe, args, "simulate");
    const SimulationChoice chosen = simulation_choice(probe, profile, args, started.compact);
    return simulate(chosen.config, args, profile, chosen.table, started);
  });
}

}  // namespace cmlbed::cli
