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

constexpr const char* kSplit = "model.split";
constexpr const char* kMicroBatches = "pipar.micro_batches";

// The value that wins for `name`: the command line's, else the file's, else none.
std::optional<std::string> effective(const std::vector<RawSetting>& file_settings,
                                     const std::vector<RawSetting>& cli_settings, const std::string& name) {
  for (const auto* settings : {&cli_settings, &file_settings}) {
    for (const RawSetting& setting : *settings) {
      if (setting.name == name) return setting.value;
    }
  }
  return std::nullopt;
}

bool is_auto(const std::vector<RawSetting>& file_settings, const std::vector<RawSetting>& cli_settings,
             const std::string& name) {
  return effective(file_settings, cli_settings, name) == std::optional<std::string>("auto");
}

// "device.K.split" for model.split, "device.K.micro_batches" for pipar.micro_batches.
std::string device_name(int device, const std::string& name) {
  return "device." + std::to_string(device) + name.substr(name.find('.'));
}

// Whether device `device` leaves `name` to the planner: its own [device.K] value wins,
// then the global one (as Config::resolve orders them).
bool is_auto_for(const std::vector<RawSetting>& file_settings, const std::vector<RawSetting>& cli_settings,
                 const std::string& name, int device) {
  if (effective(file_settings, cli_settings, device_name(device, name))) {
    return is_auto(file_settings, cli_settings, device_name(device, name));
  }
  return is_auto(file_settings, cli_settings, name);
}

// Every setting name (global or per device) whose winning value is auto.
std::vector<std::string> auto_names(const std::vector<RawSetting>& file_settings,
                                    const std::vector<RawSetting>& cli_settings) {
  std::vector<std::string> names;
  for (const auto* settings : {&file_settings, &cli_settings}) {
    for (const RawSetting& setting : *settings) {
      if (std::find(names.begin(), names.end(), setting.name) == names.end() &&
          is_auto(file_settings, cli_settings, setting.name)) {
        names.push_back(setting.name);
      }
    }
  }
  return names;
}

// The command line with `values` (name -> value) set: given on it, replaced; else added
// (winning over the file's).
std::vector<RawSetting> with_values(std::vector<RawSetting> cli_settings,
                                    const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& [name, value] : values) {
    bool replaced = false;
    for (RawSetting& setting : cli_settings) {
      if (setting.name == name) setting.value = value, replaced = true;
    }
    if (!replaced) cli_settings.push_back({name, value, "the planner (auto)"});
  }
  return cli_settings;
}

}  // namespace

bool wants_auto(const std::vector<RawSetting>& file_settings, const std::vector<RawSetting>& cli_settings) {
  return !auto_names(file_settings, cli_settings).empty();
}

std::vector<RawSetting> with_autos_replaced(const std::vector<RawSetting>& file_settings,
                                            const std::vector<RawSetting>& cli_settings, std::int64_t split,
                                            std::int64_t micro_batches) {
  std::vector<std::pair<std::string, std::string>> values;
  for (const std::string& name : auto_names(file_settings, cli_settings)) {
    const bool is_split = name == kSplit || (name.size() > 6 && name.compare(name.size() - 6, 6, ".split") == 0);
    values.emplace_back(name, std::to_string(is_split ? split : micro_batches));
  }
  return with_values(cli_settings, values);
}

namespace {

// What the planner may choose per device: its own split / micro-batch count where they
// are not auto (ConfigError for a method with nothing to choose).
std::vector<DeviceFreedom> freedom_of(const PlanSpec& spec, const std::vector<RawSetting>& file_settings,
                                      const std::vector<RawSetting>& cli_settings) {
  const MethodTraits& method = spec.traits();
  if (!method.plannable) {
    throw ConfigError("auto needs experiment.method = " + method_list(&MethodTraits::plannable, "or") +
                      " (the planner chooses their split point and micro-batches); experiment.method = " +
                      method.name);
  }
  std::vector<DeviceFreedom> freedom(spec.devices.size());
  for (int d = 1; d <= static_cast<int>(spec.devices.size()); ++d) {
    DeviceFreedom& f = freedom[static_cast<std::size_t>(d - 1)];
    const DevicePlanSpec& own = spec.devices[static_cast<std::size_t>(d - 1)];
    if (!is_auto_for(file_settings, cli_settings, kSplit, d)) f.split = own.split;
    if (!is_auto_for(file_settings, cli_settings, kMicroBatches, d)) {
      f.micro_batches = own.micro_batches;
    } else if (!method.micro_batches) {
      throw ConfigError("pipar.micro_batches = auto with experiment.method = " + method.name + ": only " +
                        method_list(&MethodTraits::micro_batches, "and") + " uses micro-batches");
    }
  }
  return freedom;
}

// The search (rank 0's part): fills `table`, prints one line per device and a summary,
// and returns the best uniform (split, m), then each device's (split, m).
std::vector<std::int64_t> search_choice(const PlanSpec& spec, const std::vector<std::size_t>& samples,
                                        const sim::Profile& profile, const std::vector<DeviceFreedom>& freedom,
                                        double profiled_s,
                                        std::chrono::steady_clock::time_point started,
                                        trace::ResultsFile::PlanTable& table) {
  const int devices = static_cast<int>(freedom.size());
  std::vector<std::int64_t> chosen(2 + 2 * static_cast<std::size_t>(devices), 0);
  const PlanResult result = search_plan(spec, profile, samples, freedom, first_plan_links_held_at(spec));
  const PlanCandidate& best = result.candidates[result.best];
  chosen[0] = static_cast<std::int64_t>(best.split);
  chosen[1] = best.micro_batches;
  for (std::size_t d = 0; d < result.choices.size(); ++d) {
    chosen[2 + 2 * d] = static_cast<std::int64_t>(result.choices[d].split);
    chosen[3 + 2 * d] = result.choices[d].micro_batches;
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
  return chosen;
}

// Every rank's part: the command line and the plan per device from search_choice's
// numbers. Global autos take the best uniform pair; a device gets its own setting where
// its choice differs from that or its own [device.K] value was auto.
void adopt(AutoChoice& choice, const std::vector<std::int64_t>& chosen, const std::vector<RawSetting>& file_settings,
           const std::vector<RawSetting>& cli_settings, int devices) {
  std::vector<std::pair<std::string, std::string>> values;
  const std::string uniform[2] = {std::to_string(chosen[0]), std::to_string(chosen[1])};
  const char* names[2] = {kSplit, kMicroBatches};
  for (int i = 0; i < 2; ++i) {
    if (is_auto(file_settings, cli_settings, names[i])) values.emplace_back(names[i], uniform[i]);
  }
  for (int d = 1; d <= devices; ++d) {
    for (int i = 0; i < 2; ++i) {
      const std::string own = std::to_string(chosen[static_cast<std::size_t>(2 * d + i)]);
      if (is_auto_for(file_settings, cli_settings, names[i], d) &&
          (own != uniform[i] || is_auto(file_settings, cli_settings, device_name(d, names[i])))) {
        values.emplace_back(device_name(d, names[i]), own);
      }
    }
  }
  choice.cli_settings = with_values(cli_settings, values);
  for (int d = 1; d <= devices; ++d) {
    choice.plan.push_back({static_cast<std::size_t>(chosen[static_cast<std::size_t>(2 * d)]),
                           static_cast<int>(chosen[static_cast<std::size_t>(2 * d + 1)])});
  }
}

}  // namespace

RunPlacement run_placement(MPI_Comm comm) {
  RunPlacement placement;
  placement.nodes = net::gather_placement(comm);
  if (!placement.nodes.empty()) placement.cores = placement_host_cores(placement.nodes);  // rank 0
  CMLBED_MPI_CHECK(MPI_Bcast(&placement.cores, 1, MPI_INT, 0, comm));
  return placement;
}

AutoChoice choose_auto(const Config& probe, const std::vector<RawSetting>& file_settings,
                       const std::vector<RawSetting>& cli_settings, int devices, bool is_server, MPI_Comm comm) {
  // Where the ranks sit decides the cores the planner's simulator shares among them
  // (plan.host_cores = placement; docs/explanation/fidelity.md).
  const RunPlacement placement = run_placement(comm);
  // Derived once: below, only the profile's path and the devices' shares of the data
  // (device_sample_counts, a read of the data set) come from the probe itself.
  const PlanSpec spec = plan_spec(probe, devices, placement.cores);
  if (is_server) std::cout << "plan: host: " << spec.host_text << "; " << net::placement_text(placement.nodes) << std::endl;
  const std::string profile_file = probe.text("plan.profile");
  std::vector<DeviceFreedom> freedom = freedom_of(spec, file_settings, cli_settings);
  const auto started = std::chrono::steady_clock::now();
  std::optional<std::string> error;
  sim::Profile profile;
  if (profile_file.empty()) {
    if (is_server) std::cout << "plan: profiling (auto; one rank per host and thread count)" << std::endl;
    // Cheaper than `cmlbed profile`'s defaults (2 + 5 runs per figure, interpolation
    // check): planning is paid by the run it plans (docs/explanation/simulator.md, overhead).
    ProfilerSettings settings;
    settings.warmup = 1;
    settings.repeats = 3;
    settings.check_interpolation = false;
    profile = profile_ranks(spec, comm, settings);
  } else if (is_server) {
    try {
      profile = sim::read_profile(profile_file);
    } catch (const std::exception& e) {
      error = std::string("plan.profile: ") + e.what();
    }
  }
  const double profiled_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  AutoChoice choice;
  // Broadcast to every rank: the best uniform (split, m), then each device's.
  std::vector<std::int64_t> chosen(2 + 2 * static_cast<std::size_t>(devices), 0);
  if (is_server && !error) {
    try {
      chosen = search_choice(spec, device_sample_counts(probe, devices), profile, freedom, profiled_s, started,
                             choice.table);
    } catch (const std::exception& e) {
      error = std::string("planning auto: ") + e.what();
    }
  }
  error = net::agree_on_error(error, comm);
  if (error) throw ConfigError(*error);
  CMLBED_MPI_CHECK(MPI_Bcast(chosen.data(), static_cast<int>(chosen.size()), MPI_INT64_T, 0, comm));
  adopt(choice, chosen, file_settings, cli_settings, devices);
  choice.freedom = std::move(freedom);
  choice.profile = std::move(profile);
  choice.placement_cores = placement.cores;
  return choice;
}

void refuse_replan_without_auto(const Config& config) {
  if (config.text("plan.replan") == "off") return;
  throw ConfigError("plan.replan = " + config.text("plan.replan") +
                    " re-plans what the planner chooses, and nothing is auto: set model.split = auto "
                    "and/or pipar.micro_batches = auto, or plan.replan = off (a results file stores the "
                    "first plan's values in place of auto; rerun the original configuration to re-plan)");
}

AutoChoice choose_auto_from(const Config& probe, const sim::Profile& profile,
                            const std::vector<RawSetting>& file_settings, const std::vector<RawSetting>& cli_settings,
                            int devices) {
  const PlanSpec spec = plan_spec(probe, devices);
  std::vector<DeviceFreedom> freedom = freedom_of(spec, file_settings, cli_settings);
  AutoChoice choice;
  std::vector<std::int64_t> chosen;
  try {
    chosen = search_choice(spec, device_sample_counts(probe, devices), profile, freedom, 0.0,
                           std::chrono::steady_clock::now(), choice.table);
  } catch (const ConfigError&) {
    throw;
  } catch (const std::exception& e) {
    throw ConfigError(std::string("planning auto: ") + e.what());
  }
  adopt(choice, chosen, file_settings, cli_settings, devices);
  choice.freedom = std::move(freedom);
  choice.profile = profile;
  return choice;
}

}  // namespace cmlbed::planner
