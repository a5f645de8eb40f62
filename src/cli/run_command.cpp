#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "cmlbed/config/config.hpp"
#include "cmlbed/config/settings.hpp"
#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/option_reference.hpp"
#include "cmlbed/config/option_table.hpp"
#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/mpi_session.hpp"
#include "cmlbed/planner/auto_plan.hpp"
#include "cmlbed/planner/replanning.hpp"
#include "cmlbed/planner/simulation_setup.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/setup/validate.hpp"
#include "cmlbed/trace/results_file.hpp"
#include "cmlbed/trace/startup_clock.hpp"
#include "cmlbed/run/experiment.hpp"
#include "cmlbed/train/method_registry.hpp"
#include "cmlbed/train/privacy.hpp"
#include "commands.hpp"
#include "run_arguments.hpp"
#include "pacing_check.hpp"
#include "run_listing.hpp"

namespace cmlbed::cli {
namespace {

// The options a resumed run may change (OptionSpec::resume_may_change), for messages.
std::string options_resume_may_change() {
  std::string names;
  for (const OptionSpec& spec : option_table()) {
    if (spec.resume_may_change) names += (names.empty() ? "" : ", ") + spec.name;
  }
  return names;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  const auto canonical = [&](const std::string& path) {
    const auto resolved = std::filesystem::weakly_canonical(path, error);
    return error ? std::filesystem::absolute(path) : resolved;
  };
  return canonical(a) == canonical(b);
}

// Rank 0 reads the configuration and rank count stored in a results file and every rank
// gets them (collective; every rank throws the same ConfigError when it cannot).
std::pair<std::string, int> stored_run(const std::string& file, MPI_Comm comm, bool is_server) {
  std::string text;
  int ranks = 0;
  std::optional<std::string> error;
  if (is_server) {
    try {
      if (!std::filesystem::exists(file)) throw std::invalid_argument("no such file");
      text = trace::ResultsFile::read_string_attribute(file, "config");
      ranks = trace::ResultsFile::read_mpi_size(file);
    } catch (const std::exception& e) {
      // An HDF5 error stack is many lines; its first says what failed.
      const std::string what = e.what();
      error = "run: --resume " + file + ": not a cmlbed results file that can be continued (" +
              what.substr(0, what.find('\n')) + ")";
    }
  }
  error = net::agree_on_error(error, comm);
  if (error) throw ConfigError(*error);
  long long sizes[2] = {static_cast<long long>(text.size()), ranks};
  CMLBED_MPI_CHECK(MPI_Bcast(sizes, 2, MPI_LONG_LONG, 0, comm));
  text.resize(static_cast<std::size_t>(sizes[0]));
  CMLBED_MPI_CHECK(MPI_Bcast(text.data(), static_cast<int>(sizes[0]), MPI_CHAR, 0, comm));
  return {text, static_cast<int>(sizes[1])};
}

// Options added since results files were written without them, with the value those
// runs had (OptionSpec::value_before_it_existed).
std::vector<RawSetting> options_older_runs_had() {
  std::vector<RawSetting> settings;
  for (const OptionSpec& spec : option_table()) {
    if (spec.value_before_it_existed.empty()) continue;
    settings.push_back({spec.name, spec.value_before_it_existed,
                        "a results file written before " + spec.name + " existed"});
  }
  return settings;
}

// The configuration of a resumed run: the one stored in the file, with the overrides a
// resumed run allows (resume_may_change) or that repeat stored values, and output.file =
// the file. Every rank calls it (collective).
Config resume_config(const RunArguments& args, int mpi_size, bool is_server) {
  const std::string& file = args.resume_file;
  if (!args.config_file.empty()) {
    throw ConfigError("run: --resume " + file + " uses the configuration stored in it; drop --config " +
                      args.config_file);
  }
  if (args.dry_run) throw ConfigError("run: --resume cannot be combined with --dry-run");
  const auto [text, stored_ranks] = stored_run(file, MPI_COMM_WORLD, is_server);
  if (stored_ranks != mpi_size) {
    throw ConfigError("run: " + file + " was written by " + std::to_string(stored_ranks) +
                      " ranks; resume it with mpirun -np " + std::to_string(stored_ranks) + " (this run has " +
                      std::to_string(mpi_size) + ")");
  }
  auto stored_settings = parse_ini_settings(text, "the configuration stored in " + file);
  // Options added since the file was written take the value that run had, not today's
  // default: a stored configuration lists every option its cmlbed knew.
  for (const RawSetting& before : options_older_runs_had()) {
    const bool stored_it = std::any_of(stored_settings.begin(), stored_settings.end(),
                                       [&](const RawSetting& s) { return s.name == before.name; });
    if (!stored_it) stored_settings.push_back(before);
  }
  const Config stored = Config::resolve(stored_settings, {});
  const std::string output_file = Settings::name(&Settings::output, &OutputSection::file);
  std::vector<RawSetting> settings;
  for (const RawSetting& setting : args.settings) {
    if (setting.name == output_file) {
      if (!same_file(setting.value, file)) {
        throw ConfigError("run: --output.file=" + setting.value + ": a resumed run appends to " + file +
                          "; drop --output.file");
      }
      continue;
    }
    const OptionSpec* spec = find_option(setting.name);
    if (!(spec && spec->resume_may_change) &&
        Config::resolve(stored_settings, {setting}).to_ini() != stored.to_ini()) {
      throw ConfigError("run: --" + setting.name + "=" + setting.value + " would change the configuration " +
                        "stored in " + file +
                        (spec ? " (" + setting.name + " = " + stored.text(setting.name) + ")" : std::string()) +
                        "; a resumed run keeps it: only " + options_resume_may_change() +
                        " may be changed (and output.file may name the same file)");
    }
    settings.push_back(setting);
  }
  settings.push_back({output_file, file, "--resume"});
  Config config = Config::resolve(stored_settings, settings);
  if (is_server && ::access(file.c_str(), W_OK) != 0) {
    throw ConfigError("run: --resume " + file + ": cannot write it: " + std::strerror(errno));
  }
  return config;
}

// [privacy] with the Gaussian mechanism: the (epsilon, delta) figure over the run's
// releases, as root attributes (docs/explanation/privacy.md).
void record_privacy(const Settings& settings, int devices, trace::ResultsFile& results) {
  if (settings.privacy.mechanism != "gaussian") return;
  const std::int64_t releases = train::privacy_releases(settings, planner::device_sample_counts(settings, devices));
  const double delta = settings.privacy.delta;
  results.set_root_number("privacy_releases", static_cast<double>(releases));
  results.set_root_number("privacy_delta", delta);
  const double sensitivity = train::privacy_sensitivity(settings);
  results.set_root_number("privacy_sensitivity", sensitivity);
  results.set_root_number("privacy_epsilon",
                          train::gaussian_epsilon(settings.privacy.noise_multiplier, releases, delta, sensitivity));
}

// What a `cmlbed run` was asked to do, parsed and checked on every rank.
struct RunRequest {
  int argc = 0;
  char** argv = nullptr;
  RunArguments args;
  int ranks = 0;
  bool planning = false;  // model.split or pipar.micro_batches = auto
  // One entry per repeat (--repeats N; one without it, and one for --resume): its
  // settings, validated, autos kept for the planner.
  std::vector<Settings> repeats;
};

// A new run's settings, checked once; the planner's choice replaces the autos before the
// run (choose_auto). Every repeat is checked now, its output file included, so that the
// third seed cannot fail after two have run.
void check_new_run(RunRequest& request, bool is_server, const run::RunStamp& started) {
  RunArguments& args = request.args;
  const std::vector<RawSetting> file_settings =
      args.config_file.empty() ? std::vector<RawSetting>{} : read_ini_settings(args.config_file);
  Settings first = Config::resolve(file_settings, args.settings);
  if (is_server && first.output.file.empty()) {
    // Resolve the default file name once, so that the checked path, the path written
    // and the configuration stored in the file all agree.
    args.settings.push_back(
        {Settings::name(&Settings::output, &OutputSection::file), output_path(first, started.compact), "default"});
    first = Config::resolve(file_settings, args.settings);
  }
  for (const auto& settings : repeat_settings(args.settings, args.repeats, first.experiment.seed, first.output.file)) {
    request.repeats.emplace_back(Config::resolve(file_settings, settings));
    validate_config(request.repeats.back(), request.ranks, /*check_output=*/is_server && !args.dry_run);
  }
  request.planning = request.repeats.front().any_auto(request.ranks - 1);
  planner::refuse_replan_without_auto(request.repeats.front(), request.ranks - 1);
}

// Every rank parses and validates the same inputs (ConfigError for bad ones).
void check_request(RunRequest& request, int mpi_size, bool is_server, const run::RunStamp& started) {
  request.args = parse_run_arguments(request.argc, request.argv);
  if (request.args.help) return;
  request.ranks = planned_ranks(request.args, mpi_size);
  if (!request.args.resume_file.empty()) {
    const Settings& stored = request.repeats.emplace_back(resume_config(request.args, mpi_size, is_server));
    if (stored.plan.replan != "off") {
      throw ConfigError("run: cannot resume " + request.args.resume_file + ": it ran with plan.replan = " +
                        stored.plan.replan + ", which keeps no checkpoints (a re-planned run " +
                        "cannot be resumed yet); run its configuration again");
    }
    validate_config(stored, request.ranks, /*check_output=*/false);  // the file exists: it is appended to
  } else {
    check_new_run(request, is_server, started);
  }
  if (!request.args.dry_run) train::check_method_available(request.repeats.front());
}

// --dry-run, on rank 0: the run's plan and what repeats and auto will do.
int print_dry_run(const RunRequest& request) {
  try {
    const Settings& first = request.repeats.front();
    print_run_listing(first, request.ranks - 1, std::cout);
    const std::vector<Settings>& repeats = request.repeats;
    if (repeats.size() > 1) {
      std::cout << "note: --repeats " << repeats.size() << " runs this plan with experiment.seed = "
                << first.experiment.seed << ".." << repeats.back().experiment.seed << ", writing "
                << first.output.file << " .. " << repeats.back().output.file << "\n";
    }
    if (!request.planning) {
      check_pacing_before_run(first, request.ranks - 1, /*is_server=*/true, std::nullopt, nullptr,
                              /*alone=*/true);
    }
    if (request.planning) {
      std::cout << "note: model.split / pipar.micro_batches = auto are chosen by the planner before round 1 "
                   "(cmlbed plan shows its candidates)\n";
    }
  } catch (const std::invalid_argument& e) {  // e.g. data too small for the devices
    std::cerr << "cmlbed: error: " << e.what() << "\n";
    return 2;
  } catch (const ConfigError& e) {  // --strict-emulation: a pace this host cannot keep
    std::cerr << "cmlbed: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

// One repeat: plan it (auto) and run it. Returns the exit status.
int run_repeat(RunRequest& request, std::size_t k, const net::MpiSession& mpi, const run::RunStamp& started) {
  const bool is_server = mpi.rank() == 0;
  const int devices = request.ranks - 1;
  Settings settings = request.repeats[k];
  std::optional<planner::PlanTable> plan;
  std::optional<planner::Replanner> replanner;
  std::optional<sim::Profile> planned_profile;
  std::optional<int> placement_cores;
  if (request.planning) {
    // Each seed is planned on its own: profiling is part of the method's cost and varies
    // with the host as the rounds do.
    planner::AutoChoice choice = planner::choose_auto(settings, devices, is_server, mpi.comm());
    settings = choice.settings;
    plan = std::move(choice.table);
    placement_cores = choice.placement_cores;
    if (is_server) planned_profile = choice.profile;  // the emulation check's, before it moves
    planner::PlanSpec spec = planner::plan_spec(settings, devices, choice.placement_cores);
    if (spec.replans) {
      std::vector<std::size_t> samples;
      if (is_server) samples = planner::device_sample_counts(settings, devices);
      replanner.emplace(std::move(spec), is_server, std::move(choice.profile), std::move(choice.freedom),
                        std::move(choice.plan.devices), std::move(samples));
    }
  }
  if (!placement_cores && settings.plan.check_pacing != "off") {
    placement_cores = planner::run_placement(MPI_COMM_WORLD).cores;
  }
  check_pacing_before_run(settings, devices, is_server, placement_cores, planned_profile ? &*planned_profile : nullptr,
                          /*alone=*/false);
  return run::run_experiment(settings, mpi, settings.output.file, k == 0 ? started : run::now_stamp(),
                             request.args.resume_file.empty() ? run::RunStart::fresh : run::RunStart::resume,
                             [&](trace::ResultsFile& results) {
                               if (plan) planner::write_plan(results, *plan);
                               record_privacy(settings, devices, results);
                             },
                             replanner ? &*replanner : nullptr);
}

// Every repeat in turn; the first that does not succeed ends the command.
int run_repeats(RunRequest& request, const net::MpiSession& mpi, const run::RunStamp& started) {
  const bool is_server = mpi.rank() == 0;
  const std::size_t n = request.repeats.size();
  for (std::size_t k = 0; k < n; ++k) {
    if (n > 1 && is_server) {
      std::cout << "cmlbed: repeat " << k + 1 << " of " << n << ": experiment.seed = "
                << request.repeats[k].experiment.seed << ", writing " << request.repeats[k].output.file << std::endl;
    }
    // Each repeat's start-up is its own, not the earlier repeats' whole runs.
    if (k > 0) trace::startup_clock().restart();
    const int status = run_repeat(request, k, mpi, started);
    if (status != 0) {
      if (is_server && k + 1 < n) {
        std::cerr << "cmlbed: repeat " << k + 1 << " of " << n << " ended with status " << status
                  << "; the remaining " << n - k - 1 << " were not run" << std::endl;
      }
      return status;
    }
  }
  return 0;
}

}  // namespace

int run_command(int argc, char** argv) {
  net::MpiSession mpi(argc, argv);
  trace::startup_clock().end(trace::StartupPhase::mpi_init);
  const bool is_server = mpi.rank() == 0;
  const run::RunStamp started = run::now_stamp();
  RunRequest request;
  request.argc = argc;
  request.argv = argv;
  request.ranks = mpi.size();
  // The ranks agree on the first error so that only rank 0 reports it and every rank
  // exits with status 2.
  std::optional<std::string> error;
  try {
    check_request(request, mpi.size(), is_server, started);
  } catch (const ConfigError& e) {
    error = e.what();
  }
  error = net::agree_on_error(error, MPI_COMM_WORLD);
  trace::startup_clock().end(trace::StartupPhase::config);
  if (error) {
    if (is_server) std::cerr << "cmlbed: error: " << *error << "\n";
    return 2;
  }
  if (request.args.help && request.args.markdown) {
    if (is_server) std::cout << options_markdown();
    return 0;
  }
  if (request.args.help) {
    if (is_server) {
      std::cout << "Usage: mpirun -np N cmlbed run --config FILE [--section.key=value ...] "
                   "[--repeats N] [--dry-run [--ranks N]]\n"
                   "       mpirun -np N cmlbed run --resume RESULTS.h5 [--experiment.rounds=R ...]\n\n"
                << run_options() << "\n"
                << config_options_description();
    }
    return 0;
  }
  if (request.args.dry_run) return is_server ? print_dry_run(request) : 0;
  try {
    return run_repeats(request, mpi, started);
  } catch (const ConfigError& e) {
    // Found by every rank alike before any work (agreed): no abort needed.
    if (is_server) std::cerr << "cmlbed: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    // One rank failed while the others may be blocked waiting for it: report and take
    // the whole job down. Rank 0 has flushed every completed round to the results file.
    std::cerr << "cmlbed: failed: rank " << mpi.rank() << ": " << e.what() << std::endl;
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}

}  // namespace cmlbed::cli
