// Profiles: the JSON form round-trips, refuses what it cannot read with a message naming
// the field, and interpolates between measured batch sizes.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "cmlbed/sim/profile.hpp"

namespace cmlbed::sim {
namespace {

Profile small_profile() {
  Profile profile;
  profile.model = "lenet";
  profile.dataset = "synthetic";
  profile.optimizer = "sgd";
  profile.batch_sizes = {1, 2, 4};
  profile.warmup = 1;
  profile.repeats = 3;
  profile.measured_at = "2026-11-30T00:00:00Z";
  profile.host = "a \"quoted\" host\n";  // escaped by the library
  profile.cmlbed_version = "0.1.0";
  profile.seconds = 1.5;
  profile.interpolation_checks.push_back({3, 0.03, 0.0301});
  for (int r = 0; r < 2; ++r) {
    RankProfile rank;
    rank.rank = r;
    rank.role = r == 0 ? "server" : "device";
    rank.threads = 1;
    rank.slowdown = r == 0 ? 1 : 4;
    rank.flops_per_second = 0;
    rank.aggregate_s_per_parameter = 1e-9;
    rank.codec_s_per_byte = 2e-10;
    rank.wake_s = 4e-4;
    rank.stage_factor = 1.08;
    rank.seconds = 0.7;
    rank.layers.push_back({"conv1", 156, 1000, 4704, {0.001, 0.002, 0.004}, {0.0015, 0.003, 0.006}, 1e-5});
    profile.ranks.push_back(rank);
  }
  return profile;
}

TEST(Profile, JsonRoundTrips) {
  const Profile profile = small_profile();
  const std::string path = ::testing::TempDir() + "profile_round_trip.json";
  write_profile(path, profile);
  const Profile back = read_profile(path);
  EXPECT_EQ(to_json(back).dump(), to_json(profile).dump());
  EXPECT_EQ(back.host, profile.host);
  EXPECT_EQ(back.ranks[1].layers[0].backward_s, (std::vector<double>{0.0015, 0.003, 0.006}));
  std::remove(path.c_str());
}

TEST(Profile, RefusesWhatItCannotRead) {
  const auto refused = [](nlohmann::ordered_json json, const std::string& expected) {
    try {
      profile_from_json(json);
      ADD_FAILURE() << "accepted; expected an error with '" << expected << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  auto json = to_json(small_profile());
  json["version"] = 2;
  refused(json, "profile version 2");
  json = to_json(small_profile());
  json["format"] = "something";
  refused(json, "not a cmlbed profile");
  json = to_json(small_profile());
  json["ranks"][1]["layers"][0].erase("step_s");
  refused(json, "ranks[1].layers[0]: missing field 'step_s'");
  json = to_json(small_profile());
  json["ranks"][0]["layers"][0]["forward_s"] = {0.1};
  refused(json, "one value per batch size");
  json = to_json(small_profile());
  json["batch_sizes"] = {4, 2, 1};
  refused(json, "strictly ascending");
  json = to_json(small_profile());
  json["ranks"][0]["threads"] = "one";
  refused(json, "ranks[0].threads");
}

// A profile written before wake_s was measured reads as no wake-up cost.
TEST(Profile, AProfileWithoutWakeUpCostReadsAsNone) {
  auto json = to_json(small_profile());
  json["ranks"][1].erase("wake_s");
  const Profile back = profile_from_json(json);
  EXPECT_EQ(back.ranks[1].wake_s, 0.0);
  EXPECT_EQ(back.ranks[0].wake_s, 4e-4);
}

// A profile written before the stage factor was measured reads as 1 (the layers' medians as they are).
TEST(Profile, AProfileWithoutAStageFactorReadsAsOne) {
  auto json = to_json(small_profile());
  json["ranks"][0].erase("stage_factor");
  const Profile back = profile_from_json(json);
  EXPECT_EQ(back.ranks[0].stage_factor, 1.0);
  EXPECT_EQ(back.ranks[1].stage_factor, 1.08);
}

TEST(Profile, ReadingNamesTheFile) {
  const std::string path = ::testing::TempDir() + "not_a_profile.json";
  std::ofstream(path) << "{ not json";
  try {
    read_profile(path);
    ADD_FAILURE() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": not JSON"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
  EXPECT_THROW(read_profile(path), std::runtime_error);
}

TEST(Profile, InterpolatesBetweenMeasuredBatchSizes) {
  const std::vector<std::int64_t> sizes{1, 2, 4, 8};
  const std::vector<double> seconds{1, 2, 3, 7};
  EXPECT_DOUBLE_EQ(at_batch_size(sizes, seconds, 2), 2);
  EXPECT_DOUBLE_EQ(at_batch_size(sizes, seconds, 3), 2.5);
  EXPECT_DOUBLE_EQ(at_batch_size(sizes, seconds, 6), 5);
  EXPECT_DOUBLE_EQ(at_batch_size(sizes, seconds, 12), 11);   // beyond: through the last two
  EXPECT_DOUBLE_EQ(at_batch_size(sizes, seconds, 0.5), 0.5);  // below: proportional
  EXPECT_DOUBLE_EQ(at_batch_size({32}, {4}, 16), 2);
  EXPECT_THROW(at_batch_size(sizes, {1, 2}, 3), std::invalid_argument);
}

}  // namespace
}  // namespace cmlbed::sim
