// The planner (planner::search_plan) on a hand-made profile of LeNet with paced devices:
// alike devices get the best uniform pair and no refinement; devices that differ get a
// plan no single device can improve (checked here by trying every change), never worse
// than the best uniform pair; values the user fixed are kept.
#include <gtest/gtest.h>

#include <iomanip>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <set>

#include "cmlbed/config/config_error.hpp"
#include "cmlbed/model/zoo.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/planner/auto_plan.hpp"
#include "cmlbed/planner/parameter_search.hpp"
#include "cmlbed/planner/simulation_setup.hpp"
#include "known_server_profile.hpp"

namespace cmlbed::planner {
namespace {

// The search's mechanics: every rank on cores of its own and every micro-batch count a
// candidate (the tests of the host model and of pipar.min_micro_batch set them).
std::vector<RawSetting> base_settings() {
  return {{"experiment.method", "pipar", "test"},     {"model.name", "lenet", "test"},
          {"data.dataset", "synthetic", "test"},      {"data.synthetic_shape", "1x28x28", "test"},
          {"train.batch_size", "16", "test"},         {"train.local_iterations", "3", "test"},
          {"experiment.rounds", "2", "test"},         {"devices.flops", "20mflop/s", "test"},
          {"network.uplink_rate", "5mbit", "test"},   {"network.downlink_rate", "10mbit", "test"},
          {"plan.host_cores", "0", "test"},           {"pipar.min_micro_batch", "1", "test"}};
}


// The planner's spec of `config` for the three devices every test plans.
PlanSpec three(const Config& config) { return plan_spec(config, 3); }

double predicted(const Config& config, const sim::Profile& profile, const std::vector<DeviceChoice>& choices) {
  std::vector<DeviceFreedom> fixed;
  for (const DeviceChoice& c : choices) fixed.push_back({c.split, c.micro_batches});
  return search_plan(three(config), profile, {300, 300, 300}, fixed).chosen.round_s;
}

TEST(ParameterSearch, MicroBatchCountsKeepTheModelsSmallestTrainingBatch) {
  EXPECT_EQ(micro_batch_candidates(32), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32}));
  EXPECT_EQ(micro_batch_candidates(32, 2), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 12, 16}));
}

TEST(ParameterSearch, AlikeDevicesShareTheBestUniformPair) {
  const Config config = Config::resolve(base_settings(), {});
  const PlanResult result = search_plan(three(config), known_server_profile(config), {300, 300, 300});
  const PlanCandidate& best = result.candidates[result.best];
  EXPECT_EQ(result.passes, 0);
  for (const DeviceChoice& c : result.choices) EXPECT_EQ(c, (DeviceChoice{best.split, best.micro_batches}));
  EXPECT_DOUBLE_EQ(result.chosen.round_s, best.round_s);
  for (const PlanCandidate& c : result.candidates) EXPECT_GE(c.simulated() ? c.round_s : c.bound_s, best.round_s);
}

// `settings` with each of `changes` in place of the setting of its key (appended where
// there is none; an empty value removes it).
std::vector<RawSetting> overridden(std::vector<RawSetting> settings, const std::vector<RawSetting>& changes) {
  for (const RawSetting& change : changes) {
    const auto same = std::find_if(settings.begin(), settings.end(),
                                   [&](const RawSetting& s) { return s.name == change.name; });
    if (same != settings.end()) settings.erase(same);
    if (!change.value.empty()) settings.push_back(change);
  }
  return settings;
}

// Skipping candidates by their lower bound (plan/round_bound.hpp) chooses what simulating
// every candidate chooses, with the same predictions, on configurations bound by the
// devices, by the server (fast devices, fast links: there the bound skips), by the links,
// with devices that differ (step 2 skips too), with server streams, sfl, sfl2 and psl, and
// timed devices on shared cores; and no simulated round is shorter than its bound.
TEST(ParameterSearch, SkippingByBoundChoosesWhatSimulatingEveryCandidateChooses) {
  struct Case {
    const char* name;
    std::vector<RawSetting> extra;
    std::size_t devices = 3;
  };
  const std::vector<Case> cases = {
      {"slow devices", {}},
      // Devices as fast as the profile (1 ns a FLOP forward, 2 backward) lets them keep pace: the server,
      // serving 12, is the bottleneck.
      {"server-bound",
       {{"devices.flops", "400mflop/s", "test"}, {"network.uplink_rate", "1gbit", "test"},
        {"network.downlink_rate", "1gbit", "test"}},
       12},
      {"thin links", {{"network.uplink_rate", "200kbit", "test"}, {"network.downlink_rate", "400kbit", "test"}}},
      {"devices differ",
       {{"device.3.uplink_rate", "250kbit", "test"}, {"device.2.flops", "2gflop/s", "test"}}},
      {"server streams",
       {{"devices.flops", "400mflop/s", "test"}, {"network.uplink_rate", "1gbit", "test"},
        {"train.server_streams", "2", "test"}},
       6},
      {"sfl", {{"experiment.method", "sfl", "test"}, {"devices.flops", "2gflop/s", "test"}}, 6},
      {"sfl2", {{"experiment.method", "sfl2", "test"}, {"devices.flops", "2gflop/s", "test"}}, 6},
      {"psl", {{"experiment.method", "psl", "test"}, {"devices.flops", "2gflop/s", "test"}}, 6},
      {"psl server-bound",
       {{"experiment.method", "psl", "test"}, {"devices.flops", "400mflop/s", "test"},
        {"network.uplink_rate", "1gbit", "test"}, {"network.downlink_rate", "1gbit", "test"}},
       12},
      {"timed devices on 2 cores",
       {{"devices.flops", "", "test"}, {"devices.slowdown", "3", "test"}, {"plan.host_cores", "2", "test"}}},
  };
  std::size_t skipped = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Config config = Config::resolve(overridden(base_settings(), c.extra), {});
    const PlanSpec spec = plan_spec(config, static_cast<int>(c.devices));
    const std::vector<std::size_t> samples(c.devices, 300);
    const PlanResult every =
        search_plan(spec, known_server_profile(config), samples, {}, std::nullopt, Search::every_candidate);
    const PlanResult some = search_plan(spec, known_server_profile(config), samples);
    EXPECT_EQ(every.skipped, 0U);
    EXPECT_EQ(some.best, every.best);
    EXPECT_EQ(some.choices, every.choices);
    EXPECT_DOUBLE_EQ(some.chosen.round_s, every.chosen.round_s);
    EXPECT_EQ(some.simulations + some.skipped, every.simulations);
    for (std::size_t i = 0; i < every.candidates.size(); ++i) {
      const PlanCandidate& all = every.candidates[i];
      EXPECT_LE(all.bound_s, all.round_s) << std::setprecision(17) << all.bound_s << " " << all.round_s << " split " << all.split << ", m = " << all.micro_batches;
      EXPECT_GT(all.bound_s, 0.0);
      const PlanCandidate& one = some.candidates[i];
      EXPECT_DOUBLE_EQ(one.bound_s, all.bound_s);
      if (one.simulated()) {
        EXPECT_DOUBLE_EQ(one.round_s, all.round_s);
      } else {
        EXPECT_GT(one.bound_s, some.candidates[some.best].round_s);
      }
    }
    if (std::string(c.name) == "server-bound") {
      EXPECT_GT(some.skipped, every.candidates.size() / 2);
    }
    skipped += some.skipped;
  }
  EXPECT_GT(skipped, 0U);
}

TEST(ParameterSearch, DifferingDevicesEndWhereNoSingleDeviceCanImprove) {
  std::vector<RawSetting> settings = base_settings();
  settings.push_back({"device.3.uplink_rate", "250kbit", "test"});  // 20x thinner
  settings.push_back({"device.3.downlink_rate", "500kbit", "test"});
  settings.push_back({"device.2.flops", "80mflop/s", "test"});       // 4x faster
  const Config config = Config::resolve(settings, {});
  const sim::Profile profile = known_server_profile(config);
  const PlanResult result = search_plan(three(config), profile, {300, 300, 300});
  const PlanCandidate& best = result.candidates[result.best];
  EXPECT_GE(result.passes, 1);
  EXPECT_LE(result.chosen.round_s, best.round_s);
  EXPECT_NEAR(predicted(config, profile, result.choices), result.chosen.round_s, 1e-12);
  const std::size_t layers = model::layer_stats(model_options(config)).size();
  const auto min_split = static_cast<std::size_t>(config.integer("plan.min_split"));
  for (std::size_t d = 0; d < result.choices.size(); ++d) {
    for (std::size_t split = min_split; split <= layers; ++split) {
      for (const int m : micro_batch_candidates(16)) {
        std::vector<DeviceChoice> changed = result.choices;
        changed[d] = {split, m};
        EXPECT_GE(predicted(config, profile, changed), result.chosen.round_s * (1 - 1e-3))
            << "device " << d + 1 << " at split " << split << ", " << m << " micro-batches beats the plan";
      }
    }
  }
}

// Alike devices are planned once: six devices of two kinds are two classes, and every
// device of a class takes its class's choice; unequal shares of the data alone (every
// device trains train.local_iterations mini-batches) make no class of their own.
TEST(ParameterSearch, AlikeDevicesArePlannedAsOneClass) {
  std::vector<RawSetting> settings = base_settings();
  for (int d = 4; d <= 6; ++d) {
    settings.push_back({"device." + std::to_string(d) + ".uplink_rate", "250kbit", "test"});
    settings.push_back({"device." + std::to_string(d) + ".downlink_rate", "500kbit", "test"});
  }
  const Config config = Config::resolve(settings, {});
  const PlanResult result = search_plan(plan_spec(config, 6), known_server_profile(config), {300, 300, 300, 300, 300, 300});
  EXPECT_EQ(result.device_classes, 2U);
  EXPECT_GE(result.passes, 1);
  for (std::size_t d : {1U, 2U}) EXPECT_EQ(result.choices[d], result.choices[0]) << "device " << d + 1;
  for (std::size_t d : {4U, 5U}) EXPECT_EQ(result.choices[d], result.choices[3]) << "device " << d + 1;

  const Config alike = Config::resolve(base_settings(), {});
  const PlanResult shares = search_plan(three(alike), known_server_profile(alike), {100, 300, 500});
  EXPECT_EQ(shares.device_classes, 1U);
  EXPECT_EQ(shares.passes, 0);
}

TEST(ParameterSearch, KeepsWhatTheUserFixed) {
  std::vector<RawSetting> settings = base_settings();
  settings.push_back({"device.3.uplink_rate", "250kbit", "test"});
  const Config config = Config::resolve(settings, {});
  std::vector<DeviceFreedom> freedom(3);
  freedom[0].split = 3;          // device 1: split kept, micro-batches chosen
  freedom[2].micro_batches = 2;  // device 3: micro-batches kept, split chosen
  const PlanResult result = search_plan(three(config), known_server_profile(config), {300, 300, 300}, freedom);
  EXPECT_EQ(result.choices[0].split, 3u);
  EXPECT_EQ(result.choices[2].micro_batches, 2);
}

TEST(ParameterSearch, MinSplitKeepsLayersOnTheDevices) {
  std::vector<RawSetting> settings = base_settings();
  settings.push_back({"device.3.uplink_rate", "250kbit", "test"});
  settings.push_back({"plan.min_split", "2", "test"});
  const Config config = Config::resolve(settings, {});
  const PlanResult result = search_plan(three(config), known_server_profile(config), {300, 300, 300});
  for (const PlanCandidate& c : result.candidates) EXPECT_GE(c.split, 2u);
  for (const DeviceChoice& c : result.choices) EXPECT_GE(c.split, 2u);
  settings.back().value = "99";
  EXPECT_THROW(search_plan(three(Config::resolve(settings, {})), known_server_profile(config), {300, 300, 300}), ConfigError);
}

// Split learning keeps raw samples on the device unless the user asks otherwise: with
// fast links and a server 50x faster than the devices, split 0 (everything on the server)
// predicts the shortest round, and the planner takes it only under plan.min_split = 0.
TEST(ParameterSearch, RawSamplesStayOnTheDevicesByDefault) {
  std::vector<RawSetting> settings = base_settings();
  settings.push_back({"network.uplink_rate", "1gbit", "test"});
  settings.push_back({"network.downlink_rate", "1gbit", "test"});
  settings.erase(std::remove_if(settings.begin(), settings.end(),
                                [](const RawSetting& s) { return s.name.rfind("network.", 0) == 0 && s.value != "1gbit"; }),
                 settings.end());
  const Config config = Config::resolve(settings, {});
  EXPECT_EQ(config.integer("plan.min_split"), 1);
  for (const DeviceChoice& c : search_plan(three(config), known_server_profile(config), {300, 300, 300}).choices) {
    EXPECT_GE(c.split, 1u);
  }
  settings.push_back({"plan.min_split", "0", "test"});
  const Config centralised = Config::resolve(settings, {});
  for (const DeviceChoice& c : search_plan(three(centralised), known_server_profile(centralised), {300, 300, 300}).choices) {
    EXPECT_EQ(c.split, 0u) << "the test's premise: split 0 predicts the shortest round here";
  }
}

// pipar.min_micro_batch: no candidate cuts a mini-batch of 16 into pieces of fewer than 8
// samples (m = 1 or 2), or of 4 (m = 1..4); a mini-batch smaller than the bound is not cut.
TEST(ParameterSearch, MinMicroBatchBoundsTheCandidates) {
  struct Case {
    const char* smallest;
    const char* batch;
    std::set<int> counts;
  };
  for (const Case& c : {Case{"8", "16", {1, 2}}, Case{"4", "16", {1, 2, 3, 4}}, Case{"8", "4", {1}}}) {
    SCOPED_TRACE(std::string("min ") + c.smallest + ", batch " + c.batch);
    const Config config = Config::resolve(
        overridden(base_settings(), {{"pipar.min_micro_batch", c.smallest, "test"}, {"train.batch_size", c.batch, "test"}}),
        {});
    const PlanResult result = search_plan(three(config), known_server_profile(config), {300, 300, 300}, {}, std::nullopt,
                                          Search::every_candidate);
    std::set<int> seen;
    for (const PlanCandidate& candidate : result.candidates) seen.insert(candidate.micro_batches);
    EXPECT_EQ(seen, c.counts);
  }
  // The default is 8 samples.
  EXPECT_EQ(plan_spec(Config::resolve(overridden(base_settings(), {{"pipar.min_micro_batch", "", "test"}}), {}), 3)
                .min_micro_batch,
            8);
}

// On a host too slow for the devices' rate (12 devices and the server on 1 core, devices
// paced at 20 GFLOP/s), the planner prefers a plan predicted to keep the pace to a faster
// one that is not; where none keeps it, the fastest, marked as not keeping it.
TEST(ParameterSearch, PrefersPlansThatKeepPace) {
  PlanCandidate fast, kept;
  fast.round_s = 1.0, fast.overrun_share = 0.5;
  kept.round_s = 2.0, kept.overrun_share = 0.005;
  EXPECT_FALSE(fast.keeps_pace());
  EXPECT_TRUE(kept.keeps_pace());
  EXPECT_TRUE(better_plan(kept, fast));
  EXPECT_FALSE(better_plan(fast, kept));
  for (const char* rate : {"20mflop/s", "20gflop/s"}) {
    SCOPED_TRACE(rate);
    const Config config = Config::resolve(
        overridden(base_settings(), {{"devices.flops", rate, "test"}, {"plan.host_cores", "1", "test"}}), {});
    const PlanSpec spec = plan_spec(config, 12);
    const std::vector<std::size_t> samples(12, 300);
    const PlanResult every = search_plan(spec, known_server_profile(config), samples, {}, std::nullopt, Search::every_candidate);
    const PlanResult some = search_plan(spec, known_server_profile(config), samples);
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < every.candidates.size(); ++i) {
      if (!best || better_plan(every.candidates[i], every.candidates[*best])) best = i;
    }
    ASSERT_TRUE(best);
    EXPECT_EQ(every.best, *best);
    EXPECT_EQ(some.best, every.best);
    const bool any_keeps = std::any_of(every.candidates.begin(), every.candidates.end(),
                                       [](const PlanCandidate& c) { return c.keeps_pace(); });
    EXPECT_EQ(every.candidates[every.best].keeps_pace(), any_keeps);
  }
}

// `auto` as `cmlbed run` plans it, in one process and without mpirun: choose_auto makes
// this choice on rank 0 and broadcasts it over the run's communicator. The autos become
// the search's choice; what the user fixed stays.
TEST(AutoPlan, ChoosesWhatTheSearchChoosesWithoutMpi) {
  const std::vector<RawSetting> file = base_settings();
  const Settings autos = Config::resolve(file, {{"model.split", "auto", "command line"},
                                                {"pipar.micro_batches", "auto", "command line"}});
  const sim::Profile profile = known_server_profile(autos.config());
  const PlanResult searched = search_plan(three(autos.config()), profile, device_sample_counts(autos, 3));
  const AutoChoice choice = choose_auto_from(autos, profile, 3);
  EXPECT_FALSE(choice.settings.any_auto(3));
  EXPECT_EQ(choice.settings.model.split.all().value(), static_cast<std::int64_t>(searched.chosen.split));
  EXPECT_EQ(choice.settings.pipar.micro_batches.all().value(), searched.chosen.micro_batches);
  EXPECT_EQ(choice.settings.config().text("model.split"), std::to_string(searched.chosen.split));  // stored so

  const Settings split_fixed = Config::resolve(file, {{"model.split", "2", "command line"},
                                                      {"pipar.micro_batches", "auto", "command line"}});
  const Settings chosen2 = choose_auto_from(split_fixed, profile, 3).settings;
  EXPECT_EQ(chosen2.model.split.all().value(), 2);
  EXPECT_GE(chosen2.pipar.micro_batches.all().value(), 1);
}

// A profile's stage factor (the runtime's whole step over its layers' medians)
// multiplies the compute it times: the server's stages here, at host speed (the devices
// are paced by their FLOPs).
TEST(SimulationSetup, AProfilesStageFactorLengthensTheComputeItTimes) {
  const Config config = Config::resolve(base_settings(), {});
  sim::Profile profile = known_server_profile(config);
  const PlanSpec spec = three(config);
  const sim::SimulationInput plain = simulation_input(spec, profile, {48, 48, 48});
  profile.ranks[0].stage_factor = 1.25;
  const sim::SimulationInput factored = simulation_input(spec, profile, {48, 48, 48});
  const sim::SimulatedPart& before = plain.devices[0].server;
  const sim::SimulatedPart& after = factored.devices[0].server;
  ASSERT_GT(before.forward_s.back(), 0.0);
  EXPECT_DOUBLE_EQ(after.forward_s.back(), 1.25 * before.forward_s.back());
  EXPECT_DOUBLE_EQ(after.backward_s.back(), 1.25 * before.backward_s.back());
  EXPECT_DOUBLE_EQ(after.step_s, 1.25 * before.step_s);
  EXPECT_EQ(factored.devices[0].part.forward_s, plain.devices[0].part.forward_s);  // paced: FLOPs / rate
}

TEST(ParameterSearch, SplitFedHasOneMicroBatch) {
  std::vector<RawSetting> settings = base_settings();
  settings.push_back({"device.3.uplink_rate", "250kbit", "test"});
  settings[0].value = "sfl";
  const Config config = Config::resolve(settings, {});
  const PlanResult result = search_plan(three(config), known_server_profile(config), {300, 300, 300});
  for (const PlanCandidate& c : result.candidates) EXPECT_EQ(c.micro_batches, 1);
  for (const DeviceChoice& c : result.choices) EXPECT_EQ(c.micro_batches, 1);
}

// plan.replan's planning: a link with a trace, held at a moment, is planned exactly as a
// link of that moment's constant rate; at another moment the plan differs.
TEST(ParameterSearch, LinksHeldAtAMomentPlanAsConstantLinksOfThatRate) {
  const std::string trace = ::testing::TempDir() + "cmlbed_plan_trace_" + std::to_string(::getpid()) + ".csv";
  {
    std::ofstream out(trace);
    out << "t_seconds,rate\n0,5mbit\n1,100kbit\n";
  }
  const auto with = [&](const std::vector<RawSetting>& overrides) { return Config::resolve(base_settings(), overrides); };
  const Config traced = with({{"network.uplink_trace", trace, "test"}});
  const sim::Profile profile = known_server_profile(traced);
  const std::vector<std::size_t> samples = {300, 300, 300};
  const auto same = [&](const PlanResult& a, const PlanResult& b) {
    EXPECT_EQ(a.choices, b.choices);
    EXPECT_DOUBLE_EQ(a.chosen.round_s, b.chosen.round_s);
  };
  const PlanResult at_start = search_plan(three(traced), profile, samples, {}, 0);
  same(at_start, search_plan(three(with({})), profile, samples));  // base_settings' uplink is 5mbit
  const PlanResult after_drop = search_plan(three(traced), profile, samples, {}, 2'000'000'000);
  same(after_drop, search_plan(three(with({{"network.uplink_rate", "100kbit", "test"}})), profile, samples));
  EXPECT_GT(after_drop.chosen.round_s, at_start.chosen.round_s);
  EXPECT_NE(after_drop.choices, at_start.choices);
  // predict_plan is the search's own prediction of a plan.
  EXPECT_DOUBLE_EQ(predict_plan(three(traced), profile, samples, after_drop.choices, 2'000'000'000).round_s,
                   after_drop.chosen.round_s);
  std::remove(trace.c_str());
}

}  // namespace
}  // namespace cmlbed::planner
