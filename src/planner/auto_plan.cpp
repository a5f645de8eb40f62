#include "cmlbed/planner/auto_plan.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <limits>

#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/methods.hpp"
#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/mpi_session.hpp"
#include "cmlbed/net/wait_politely.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/planner/parameter_search.hpp"
#include "cmlbed/planner/plan_spec.hpp"
#include "cmlbed/planner/profiler.hpp"
#include "cmlbed/planner/replanning.hpp"
#include "cmlbed/planner/simulation_setup.hpp"

namespace cmlbed::planner {
namespace {

// What the planner may choose per device: its own split / micro-batch count where they
// are not auto. Validation (setup/validate.hpp) has refused autos of a method with
// nothing to choose.
std::vector<DeviceFreedom> freedom_of(const PlanSpec& spec) {
  if (!spec.traits().plannable) throw std::logic_error("freedom_of: " + spec.traits().name + " is not plannable");
  std::vector<DeviceFreedom> freedom(spec.devices.size());
  for (std::size_t d = 0; d < spec.devices.size(); ++d) {
    const DevicePlanSpec& own = spec.devices[d];
    if (!own.split_auto) freedom[d].split = own.split;
    if (!own.micro_batches_auto) freedom[d].micro_batches = own.micro_batches;
  }
  return freedom;
}

// The search (rank 0's part): fills `table`, prints one line per device and a summary,
// and returns the plan.
Plan search_choice(const PlanSpec& spec, const std::vector<std::size_t>& samples,
                                        const sim::Profile& profile, const std::vector<DeviceFreedom>& freedom,
                                        double profiled_s,
                                        std::chrono::steady_clock::time_point started,
                                        PlanTable& table) {
  const PlanResult result = search_plan(spec, profile, samples, freedom, first_plan_links_held_at(spec));
  const PlanCandidate& best = result.candidates[result.best];
  const Plan plan{best.split, best.micro_batches, result.choices};
  for (std::size_t d = 0; d < result.choices.size(); ++d) {
    table.device_split.push_back(static_cast<double>(result.choices[d].split));
    table.device_micro_batches.push_back(result.choices[d].micro_batches);
  }
  for (const PlanCandidate& c : result.candidates) {
    table.split.push_back(static_cast<double>(c.split));
    table.micro_batches.push_back(c.micro_batches);
    table.round_s.push_back(c.round_s);
    table.server_idle.push_back(c.server_idle);
    table.device_idle.push_back(c.device_idle);
    table.bytes.push_back(c.simulated() ? static_cast<double>(c.bytes) : std::numeric_limits<double>::quiet_NaN());
    table.round_bound_s.push_back(c.bound_s);
  }
  table.chosen_split = static_cast<int>(best.split);
  table.chosen_micro_batches = best.micro_batches;
  table.uniform_round_s = best.round_s;
  table.predicted_round_s = result.chosen.round_s;
  table.passes = result.passes;
  table.closed_form_micro_batches = result.closed_form_micro_batches;
  table.closed_form_round_s = result.closed_form.round_s;
  table.profile_json = sim::to_json(profile).dump();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!result.chosen.keeps_pace()) {
    std::cout << "plan: warning: no plan keeps the devices' pace on this host (" << spec.host_text
              << "): the chosen one's held stages are predicted to run " << result.chosen.overrun_share * 100
              << "% past their lengths; its times will be partly this host's (docs/explanation/fidelity.md)\n";
  }
  for (std::size_t d = 0; d < result.choices.size(); ++d) {
    const train::DeviceChoice& c = result.choices[d];
    std::cout << "plan: device " << d + 1 << ": split " << c.split
              << (c.split == 0 ? std::string(" (") + kRawDataMark + ")" : std::string()) << ", " << c.micro_batches
              << " micro-batch"
              << (c.micro_batches == 1 ? "" : "es") << ", predicted round " << result.chosen.round_s << " s\n";
  }
  std::cout << "plan: " << result.simulations << " simulations, " << result.skipped << " skipped by their bound ("
            << result.candidates.size() << " uniform"
            << (result.passes ? ", then " + std::to_string(result.passes) + " pass(es) over " +
                                    std::to_string(result.device_classes) + " classes of alike devices"
                              : std::string())
            << "), profile " << profiled_s << " s, all " << took << " s; best uniform: split " << best.split
            << ", " << best.micro_batches << " micro-batches, " << best.round_s
            << " s; the PiPar authors' closed form would take " << result.closed_form_micro_batches
            << " micro-batches (predicted round " << result.closed_form.round_s << " s)" << std::endl;
  return plan;
}

// Rank 0's plan on every rank of `comm` (collective).
Plan broadcast_plan(Plan plan, int devices, MPI_Comm comm) {
  std::vector<std::int64_t> numbers(2 + 2 * static_cast<std::size_t>(devices), 0);
  if (plan.devices.size() == static_cast<std::size_t>(devices)) {
    numbers[0] = static_cast<std::int64_t>(plan.split);
    numbers[1] = plan.micro_batches;
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
      numbers[2 + 2 * d] = static_cast<std::int64_t>(plan.devices[d].split);
      numbers[3 + 2 * d] = plan.devices[d].micro_batches;
    }
  }
  CMLBED_MPI_CHECK(MPI_Bcast(numbers.data(), static_cast<int>(numbers.size()), MPI_INT64_T, 0, comm));
  plan.split = static_cast<std::size_t>(numbers[0]);
  plan.micro_batches = static_cast<int>(numbers[1]);
  plan.devices.resize(static_cast<std::size_t>(devices));
  for (std::size_t d = 0; d < plan.devices.size(); ++d) {
    plan.devices[d] = {static_cast<std::size_t>(numbers[2 + 2 * d]), static_cast<int>(numbers[3 + 2 * d])};
  }
  return plan;
}

}  // namespace

Settings with_plan(const Settings& settings, const Plan& plan) {
  std::vector<std::int64_t> splits, micro_batches;
  for (const train::DeviceChoice& choice : plan.devices) {
    splits.push_back(static_cast<std::int64_t>(choice.split));
    micro_batches.push_back(choice.micro_batches);
  }
  return settings.with_chosen(&Settings::model, &ModelSection::split, static_cast<std::int64_t>(plan.split), splits)
      .with_chosen(&Settings::pipar, &PiparSection::micro_batches, plan.micro_batches, micro_batches);
}

RunPlacement run_placement(MPI_Comm comm) {
  RunPlacement placement;
  placement.nodes = net::gather_placement(comm);
  if (!placement.nodes.empty()) placement.cores = placement_host_cores(placement.nodes);  // rank 0
  CMLBED_MPI_CHECK(MPI_Bcast(&placement.cores, 1, MPI_INT, 0, comm));
  return placement;
}

AutoChoice choose_auto(const Settings& settings, int devices, bool is_server, MPI_Comm comm) {
  // Where the ranks sit decides the cores the planner's simulator shares among them
  // (plan.host_cores = placement; docs/explanation/fidelity.md).
  const RunPlacement placement = run_placement(comm);
  // Derived once: below, only the profile's path and the devices' shares of the data
  // (device_sample_counts, a read of the data set) come from the settings themselves.
  const PlanSpec spec = plan_spec(settings, devices, placement.cores);
  if (is_server) std::cout << "plan: host: " << spec.host_text << "; " << net::placement_text(placement.nodes) << std::endl;
  const std::string& profile_file = settings.plan.profile;
  std::vector<DeviceFreedom> freedom = freedom_of(spec);
  const auto started = std::chrono::steady_clock::now();
  std::optional<std::string> error;
  sim::Profile profile;
  if (profile_file.empty()) {
    if (is_server) std::cout << "plan: profiling (auto; one rank per host and thread count)" << std::endl;
    // Cheaper than `cmlbed profile`'s defaults (2 + 5 runs per figure, interpolation
    // check): planning is paid by the run it plans (docs/explanation/simulator.md, overhead).
    ProfilerSettings quick;
    quick.warmup = 1;
    quick.repeats = 3;
    quick.check_interpolation = false;
    profile = profile_ranks(spec, comm, quick);
  } else if (is_server) {
    try {
      profile = sim::read_profile(profile_file);
    } catch (const std::exception& e) {
      error = std::string("plan.profile: ") + e.what();
    }
  }
  const double profiled_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  AutoChoice choice;
  Plan plan;
  if (is_server && !error) {
    try {
      plan = search_choice(spec, device_sample_counts(settings, devices), profile, freedom, profiled_s, started,
                           choice.table);
    } catch (const std::exception& e) {
      error = std::string("planning auto: ") + e.what();
    }
  }
  error = net::agree_on_error(error, comm);
  if (error) throw ConfigError(*error);
  choice.plan = broadcast_plan(std::move(plan), devices, comm);
  choice.settings = with_plan(settings, choice.plan);
  choice.freedom = std::move(freedom);
  choice.profile = std::move(profile);
  choice.placement_cores = placement.cores;
  return choice;
}

void refuse_replan_without_auto(const Settings& settings, int devices) {
  if (settings.plan.replan == "off" || settings.any_auto(devices)) return;
  throw ConfigError("plan.replan = " + settings.plan.replan +
                    " re-plans what the planner chooses, and nothing is auto: set model.split = auto "
                    "and/or pipar.micro_batches = auto, or plan.replan = off (a results file stores the "
                    "first plan's values in place of auto; rerun the original configuration to re-plan)");
}

AutoChoice choose_auto_from(const Settings& settings, const sim::Profile& profile, int devices) {
  const PlanSpec spec = plan_spec(settings, devices);
  std::vector<DeviceFreedom> freedom = freedom_of(spec);
  AutoChoice choice;
  try {
    choice.plan = search_choice(spec, device_sample_counts(settings, devices), profile, freedom, 0.0,
                                std::chrono::steady_clock::now(), choice.table);
  } catch (const ConfigError&) {
    throw;
  } catch (const std::exception& e) {
    throw ConfigError(std::string("planning auto: ") + e.what());
  }
  choice.settings = with_plan(settings, choice.plan);
  choice.freedom = std::move(freedom);
  choice.profile = profile;
  return choice;
}

}  // namespace cmlbed::planner
