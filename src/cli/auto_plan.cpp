#include "auto_plan.hpp"

#include <chrono>
#include <iostream>

#include "cmlbed/config/config_error.hpp"
#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/mpi_session.hpp"
#include "cmlbed/net/wait_politely.hpp"
#include "cmlbed/train/parameter_search.hpp"
#include "cmlbed/train/profiler.hpp"
#include "cmlbed/train/simulation_setup.hpp"

namespace cmlbed::cli {
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

// The command line with `values` (name -> value) in place of those options' autos.
std::vector<RawSetting> replace_autos(const std::vector<RawSetting>& file_settings,
                                      std::vector<RawSetting> cli_settings,
                                      const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& [name, value] : values) {
    if (!is_auto(file_settings, cli_settings, name)) continue;
    bool replaced = false;
    for (RawSetting& setting : cli_settings) {
      if (setting.name == name) setting.value = value, replaced = true;
    }
    if (!replaced) cli_settings.push_back({name, value, "the planner (auto in the file)"});
  }
  return cli_settings;
}

}  // namespace

bool wants_auto(const std::vector<RawSetting>& file_settings, const std::vector<RawSetting>& cli_settings) {
  for (const auto* settings : {&file_settings, &cli_settings}) {
    for (const RawSetting& setting : *settings) {
      if (setting.value == "auto" && setting.name.rfind("device.", 0) == 0) {
        throw ConfigError("option '" + setting.name + "' (" + setting.origin +
                          "): auto is chosen for all devices together; per-device auto is not built yet: set " +
                          kSplit + " = auto in [model] or on the command line");
      }
    }
  }
  return is_auto(file_settings, cli_settings, kSplit) || is_auto(file_settings, cli_settings, kMicroBatches);
}

std::vector<RawSetting> with_autos_replaced(const std::vector<RawSetting>& file_settings,
                                            const std::vector<RawSetting>& cli_settings, std::int64_t split,
                                            std::int64_t micro_batches) {
  return replace_autos(file_settings, cli_settings,
                       {{kSplit, std::to_string(split)}, {kMicroBatches, std::to_string(micro_batches)}});
}

AutoChoice choose_auto(const Config& probe, const std::vector<RawSetting>& file_settings,
                       const std::vector<RawSetting>& cli_settings, int devices, bool is_server) {
  const bool split_auto = is_auto(file_settings, cli_settings, kSplit);
  const bool micro_auto = is_auto(file_settings, cli_settings, kMicroBatches);
  const std::string method = probe.text("experiment.method");
  if (method != "sfl" && method != "pipar") {
    throw ConfigError("auto needs experiment.method = sfl or pipar (the planner chooses their split point and "
                      "micro-batches); experiment.method = " + method);
  }
  if (micro_auto && method != "pipar") {
    throw ConfigError("pipar.micro_batches = auto with experiment.method = " + method + ": only pipar uses micro-batches");
  }
  const auto started = std::chrono::steady_clock::now();
  std::optional<std::string> error;
  plan::Profile profile;
  if (probe.text("plan.profile").empty()) {
    if (is_server) std::cout << "plan: profiling every rank in turn (auto)" << std::endl;
    profile = train::profile_ranks(probe, MPI_COMM_WORLD, train::ProfilerSettings{});
  } else if (is_server) {
    try {
      profile = plan::read_profile(probe.text("plan.profile"));
    } catch (const std::exception& e) {
      error = std::string("plan.profile: ") + e.what();
    }
  }
  const double profiled_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  AutoChoice choice;
  std::int64_t chosen[2] = {0, 0};
  if (is_server && !error) {
    try {
      train::PlanOverride fixed;
      if (!split_auto) fixed.split = static_cast<std::size_t>(probe.integer(kSplit));
      if (!micro_auto) fixed.micro_batches = static_cast<int>(probe.integer(kMicroBatches));
      const train::PlanResult result =
          train::search_plan(probe, profile, train::device_sample_counts(probe, devices), fixed);
      const train::PlanCandidate& best = result.candidates[result.best];
      chosen[0] = static_cast<std::int64_t>(best.split);
      chosen[1] = best.micro_batches;
      trace::ResultsFile::PlanTable& table = choice.table;
      for (const train::PlanCandidate& c : result.candidates) {
        table.split.push_back(static_cast<double>(c.split));
        table.micro_batches.push_back(c.micro_batches);
        table.round_s.push_back(c.round_s);
        table.server_idle.push_back(c.server_idle);
        table.device_idle.push_back(c.device_idle);
        table.bytes.push_back(static_cast<double>(c.bytes));
      }
      table.chosen_split = static_cast<int>(best.split);
      table.chosen_micro_batches = best.micro_batches;
      table.predicted_round_s = best.round_s;
      table.closed_form_micro_batches = result.closed_form_micro_batches;
      table.closed_form_round_s = result.closed_form.round_s;
      table.profile_json = plan::to_json(profile).dump();
      const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      for (int d = 1; d <= devices; ++d) {
        std::cout << "plan: device " << d << ": split " << best.split << ", " << best.micro_batches
                  << " micro-batch" << (best.micro_batches == 1 ? "" : "es") << ", predicted round " << best.round_s
                  << " s\n";
      }
      std::cout << "plan: " << result.candidates.size() << " candidates, profile " << profiled_s << " s, all "
                << took << " s; the PiPar authors' closed form would take " << result.closed_form_micro_batches
                << " micro-batches (predicted round " << result.closed_form.round_s << " s)" << std::endl;
    } catch (const std::exception& e) {
      error = std::string("planning auto: ") + e.what();
    }
  }
  error = net::agree_on_error(error, MPI_COMM_WORLD);
  if (error) throw ConfigError(*error);
  CMLBED_MPI_CHECK(MPI_Bcast(chosen, 2, MPI_INT64_T, 0, MPI_COMM_WORLD));
  choice.cli_settings = replace_autos(file_settings, cli_settings,
                                      {{kSplit, std::to_string(chosen[0])}, {kMicroBatches, std::to_string(chosen[1])}});
  return choice;
}

}  // namespace cmlbed::cli
