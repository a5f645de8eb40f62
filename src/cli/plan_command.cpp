// `cmlbed plan`: every split point and micro-batch count of a plannable method's run,
// predicted by the schedule simulator from a profile; the fastest marked, and the
// PiPar authors' closed-form choice beside it.
#include <cstdio>
#include <iostream>
#include <string>

#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/methods.hpp"
#include "cmlbed/config/option_table.hpp"
#include "cmlbed/run/experiment.hpp"
#include "cmlbed/planner/parameter_search.hpp"
#include "cmlbed/planner/replanning.hpp"
#include "cmlbed/planner/simulation_setup.hpp"
#include "commands.hpp"
#include "simulation_arguments.hpp"

namespace cmlbed::cli {
namespace {

std::string row(const planner::PlanCandidate& c, const char* mark) {
  char text[160];
  if (!c.simulated()) {
    std::snprintf(text, sizeof text, "%5zu %5d    >= %-8.4g not simulated: its bound exceeds the best round", c.split,
                  c.micro_batches, c.bound_s);
    return text;
  }
  std::snprintf(text, sizeof text, "%5zu %5d %12.4f %14.1f %14.1f %12.3f %s", c.split, c.micro_batches, c.round_s,
                c.server_idle * 100, c.device_idle * 100, static_cast<double>(c.bytes) / 1e6, mark);
  return text;
}

}  // namespace

int plan_command(int argc, char** argv) {
  const run::RunStamp started = run::now_stamp();
  return report_errors([&] {
    SimulateArguments args = parse_simulate_arguments("plan", argc, argv);
    if (args.help) {
      std::cout << "Usage: cmlbed plan --config FILE [--profile PROFILE.json] [--devices N] [--every-candidate]\n"
                   "                   [--section.key=value ...]\n"
                   "Predicts every split point P and micro-batch count m of a run of "
                << method_list(&MethodTraits::plannable, "or")
                << " with the\n"
                   "schedule simulator (all devices together) and marks the fastest; when devices differ,\n"
                   "refines the choice device by device (docs/explanation/simulator.md).\n\n"
                << simulate_options("plan") << "\n"
                << config_options_description();
      return 0;
    }
    const Settings settings = simulation_settings(args, started.compact, /*check_output=*/false);
    const sim::Profile profile = simulation_profile(settings, args, "plan");
    const planner::PlanSpec spec = planner::plan_spec(settings, *args.devices);
    const planner::PlanResult result = planner::search_plan(
        spec, profile, planner::device_sample_counts(settings, *args.devices), {}, planner::first_plan_links_held_at(spec),
        args.every_candidate ? planner::Search::every_candidate : planner::Search::skip_by_bound);
    std::cout << "plan for " << settings.experiment.method << ", " << settings.model.name << ", "
              << *args.devices << " devices (round time: the simulated second round); host: " << spec.host_text << "\n"
              << "    P     m      round s  server idle %  device idle %     MB/round\n";
    for (std::size_t i = 0; i < result.candidates.size(); ++i) {
      std::cout << row(result.candidates[i], i == result.best ? "<- chosen" : "") << "\n";
    }
    const planner::PlanCandidate& best = result.candidates[result.best];
    std::cout << "chosen: split " << best.split << ", " << best.micro_batches << " micro-batches, predicted round "
              << best.round_s << " s\n"
              << "the PiPar authors' closed form at split " << best.split << ": " << result.closed_form_micro_batches
              << " micro-batches, predicted round " << result.closed_form.round_s << " s ("
              << (result.closed_form.round_s / best.round_s - 1) * 100 << "% slower)\n"
              << result.simulations << " simulations; " << result.skipped
              << " candidates skipped, their lower bound above the best round (docs/explanation/simulator.md)\n";
    if (!result.chosen.keeps_pace()) {
      std::cout << "warning: no plan keeps the devices' pace on this host: the chosen one's held stages are "
                   "predicted to run "
                << result.chosen.overrun_share * 100
                << "% past their lengths (docs/explanation/fidelity.md)\n";
    }
    if (result.passes > 0) {
      std::cout << "devices differ (" << result.device_classes << " classes of alike devices): refined class by class in "
                << result.passes << " pass(es), "
                << result.simulations << " simulations in all; predicted round " << result.chosen.round_s << " s ("
                << (result.chosen.round_s / best.round_s - 1) * 100 << "% against the best uniform pair)\n";
      for (std::size_t d = 0; d < result.choices.size(); ++d) {
        std::cout << "  device " << d + 1 << ": split " << result.choices[d].split << ", "
                  << result.choices[d].micro_batches << " micro-batches\n";
      }
    }
    std::cout << std::flush;
    return 0;
  });
}

}  // namespace cmlbed::cli
