#include "cmlbed/planner/replanning.hpp"

#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "cmlbed/base/units.hpp"
#include "cmlbed/net/link.hpp"
#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/mpi_session.hpp"
#include "cmlbed/net/wait_politely.hpp"
#include "cmlbed/planner/simulation_setup.hpp"

namespace cmlbed::planner {
namespace {

std::string rate_text(const std::optional<double>& rate) { return rate ? format_rate(*rate) : "unshaped"; }

double rate_column(const std::optional<double>& rate) { return rate ? *rate : std::nan(""); }

std::string plan_text(const DeviceChoice& choice) {
  return "split " + std::to_string(choice.split) + ", " + std::to_string(choice.micro_batches) + " micro-batch" +
         (choice.micro_batches == 1 ? "" : "es");
}

}  // namespace

std::optional<std::int64_t> first_plan_links_held_at(const PlanSpec& spec) {
  if (spec.replans) return 0;
  return std::nullopt;
}

Replanner::Replanner(PlanSpec spec, bool is_server, sim::Profile profile, std::vector<DeviceFreedom> freedom,
                     std::vector<DeviceChoice> plan, std::vector<std::size_t> samples)
    : spec_(std::move(spec)), devices_(static_cast<int>(spec_.devices.size())), is_server_(is_server),
      profile_(std::move(profile)), freedom_(std::move(freedom)), samples_(std::move(samples)), plan_(std::move(plan)) {
  if (plan_.size() != spec_.devices.size()) throw std::invalid_argument("Replanner: a plan for another device count");
  if (is_server_ && samples_.size() != spec_.devices.size()) {
    throw std::invalid_argument("Replanner: the server needs every device's sample count");
  }
  planned_for_ = rates_at(0);
}

Replanner::Rates Replanner::rates_at(std::int64_t links_elapsed_ns) const {
  Rates rates;
  for (const DevicePlanSpec& device : spec_.devices) {
    rates.up.push_back(net::rate_at(device.uplink, links_elapsed_ns));
    rates.down.push_back(net::rate_at(device.downlink, links_elapsed_ns));
  }
  return rates;
}

Replanner::Outcome Replanner::check(int round, std::int64_t links_elapsed_ns) {
  if (!is_server_) throw std::logic_error("Replanner::check: the server plans, not a device");
  Outcome outcome;
  if (!spec_.training.aggregates_after(round) || round + 1 >= spec_.training.rounds) {
    return outcome;
  }
  try {
    const Rates now = rates_at(links_elapsed_ns);
    if (now == planned_for_) return outcome;
    outcome.checked = true;
    outcome.adopted = plan_again(round, links_elapsed_ns, now);
    planned_for_ = now;
  } catch (const std::exception& e) {
    throw std::runtime_error("re-planning after round " + std::to_string(round + 1) + ": " + e.what());
  }
  if (outcome.adopted) plan_ = *outcome.adopted;
  return outcome;
}

Replanner::Outcome Replanner::after_round(int round, std::int64_t links_elapsed_ns, MPI_Comm comm) {
  // [checked, changed, split and micro-batches per device]
  std::vector<std::int64_t> word(2 + 2 * static_cast<std::size_t>(devices_), 0);
  std::optional<std::string> error;
  if (is_server_) {
    try {
      const Outcome outcome = check(round, links_elapsed_ns);
      word[0] = outcome.checked ? 1 : 0;
      if (outcome.adopted) {
        word[1] = 1;
        for (std::size_t d = 0; d < outcome.adopted->size(); ++d) {
          word[2 + 2 * d] = static_cast<std::int64_t>((*outcome.adopted)[d].split);
          word[3 + 2 * d] = (*outcome.adopted)[d].micro_batches;
        }
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  // The devices sleep while the server plans (a spinning wait would take the cores the
  // simulations need).
  net::barrier_politely(comm);
  error = net::agree_on_error(error, comm);
  if (error) throw std::runtime_error(*error);
  CMLBED_MPI_CHECK(MPI_Bcast(word.data(), static_cast<int>(word.size()), MPI_INT64_T, 0, comm));
  Outcome outcome;
  outcome.checked = word[0] != 0;
  if (word[1] != 0) {
    std::vector<DeviceChoice> plan;
    for (int d = 0; d < devices_; ++d) {
      plan.push_back({static_cast<std::size_t>(word[2 + 2 * static_cast<std::size_t>(d)]),
                      static_cast<int>(word[3 + 2 * static_cast<std::size_t>(d)])});
    }
    plan_ = plan;
    outcome.adopted = std::move(plan);
  }
  return outcome;
}

std::optional<std::vector<DeviceChoice>> Replanner::plan_again(int round, std::int64_t links_elapsed_ns, const Rates& now) {
  const auto started = std::chrono::steady_clock::now();
  const PlanResult result = search_plan(spec_, profile_, samples_, freedom_, links_elapsed_ns);
  const PlanCandidate in_force = predict_plan(spec_, profile_, samples_, plan_, links_elapsed_ns);
  const bool changed = result.choices != plan_ && result.chosen.round_s < in_force.round_s * (1 - kReplanGain);
  const std::vector<DeviceChoice>& next = changed ? result.choices : plan_;
  const double predicted = changed ? result.chosen.round_s : in_force.round_s;
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::ostringstream line;
  line << std::setprecision(4) << "plan: after round " << round + 1 << " (" << std::fixed << std::setprecision(1)
       << static_cast<double>(links_elapsed_ns) * 1e-9 << " s into the run) the links changed:";
  for (int d = 0; d < devices_; ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (now.up[i] == planned_for_.up[i] && now.down[i] == planned_for_.down[i]) continue;
    line << " device " << d + 1 << " " << rate_text(now.up[i]) << " up / " << rate_text(now.down[i]) << " down;";
  }
  line << std::setprecision(3) << " re-planned in " << took << " s (" << result.simulations << " simulations): ";
  if (changed) {
    for (int d = 0; d < devices_; ++d) {
      const auto i = static_cast<std::size_t>(d);
      if (next[i] == plan_[i]) continue;
      line << "device " << d + 1 << ": " << plan_text(plan_[i]) << " -> " << plan_text(next[i]) << "; ";
    }
    line << "predicted round " << predicted << " s (the plan in force: " << in_force.round_s << " s)";
  } else {
    line << "plan kept (predicted round " << in_force.round_s << " s; the best found: " << result.chosen.round_s
         << " s, not " << kReplanGain * 100 << "% faster)";
  }
  std::cout << line.str() << std::endl;

  for (int d = 0; d < devices_; ++d) {
    const auto i = static_cast<std::size_t>(d);
    table_.round.push_back(round);
    table_.device.push_back(d + 1);
    table_.uplink_bits_per_second.push_back(rate_column(now.up[i]));
    table_.downlink_bits_per_second.push_back(rate_column(now.down[i]));
    table_.split.push_back(static_cast<double>(next[i].split));
    table_.micro_batches.push_back(next[i].micro_batches);
    table_.predicted_round_s.push_back(predicted);
    table_.previous_plan_round_s.push_back(in_force.round_s);
    table_.changed.push_back(changed ? 1 : 0);
  }
  if (!changed) return std::nullopt;
  return next;
}

}  // namespace cmlbed::planner
