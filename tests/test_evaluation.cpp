// Per-device scores from one pass over the test set, and the evaluation records every
// rank sends to rank 0.
#include <gtest/gtest.h>

#include <cmath>

#include "cmlbed/train/evaluation.hpp"

namespace cmlbed::train {
namespace {

// Three classes with 10, 20 and 0 test samples; 5, 20 and 0 right; summed losses.
ClassScores three_classes() { return {{10, 20, 0}, {5, 20, 0}, {10.0, 2.0, 0.0}}; }

TEST(Evaluation, OverallScoreCountsEverySample) {
  const Score s = overall_score(three_classes());
  EXPECT_EQ(s.samples, 30);
  EXPECT_DOUBLE_EQ(s.accuracy, 25.0 / 30.0);
  EXPECT_DOUBLE_EQ(s.loss, 12.0 / 30.0);
}

TEST(Evaluation, LabelSharesOfAPartition) {
  const std::vector<std::uint8_t> labels = {0, 1, 1, 2, 1, 0};
  const auto shares = label_shares(labels, {1, 2, 4, 5}, 3);  // labels 1, 1, 1, 0
  EXPECT_DOUBLE_EQ(shares[0], 0.25);
  EXPECT_DOUBLE_EQ(shares[1], 0.75);
  EXPECT_DOUBLE_EQ(shares[2], 0.0);
  EXPECT_THROW(label_shares(labels, {9}, 3), std::out_of_range);
}

TEST(Evaluation, DeviceScoreWeighsClassAccuraciesByItsShares) {
  // 90% class 0 (accuracy 0.5), 10% class 1 (accuracy 1.0).
  const Score s = device_score(three_classes(), {0.9, 0.1, 0.0});
  EXPECT_DOUBLE_EQ(s.accuracy, 0.9 * 0.5 + 0.1 * 1.0);
  EXPECT_DOUBLE_EQ(s.loss, 0.9 * 1.0 + 0.1 * 0.1);
  EXPECT_EQ(s.samples, 30);  // the test samples of its two classes
  // A class without test samples is left out and the rest renormalised.
  const Score only_class_0 = device_score(three_classes(), {0.5, 0.0, 0.5});
  EXPECT_DOUBLE_EQ(only_class_0.accuracy, 0.5);
  EXPECT_EQ(only_class_0.samples, 10);
  EXPECT_TRUE(std::isnan(device_score(three_classes(), {0.0, 0.0, 1.0}).accuracy));
}

TEST(Evaluation, WeightedMeanWeighsDevicesByTheirTestSamples) {
  const Score mean = weighted_mean({{1, {1.0, 0.5, 10}}, {2, {2.0, 1.0, 30}}, {3, {0, std::nan(""), 0}}});
  EXPECT_EQ(mean.samples, 40);
  EXPECT_DOUBLE_EQ(mean.accuracy, (0.5 * 10 + 1.0 * 30) / 40);
  EXPECT_DOUBLE_EQ(mean.loss, (1.0 * 10 + 2.0 * 30) / 40);
  EXPECT_TRUE(std::isnan(weighted_mean({}).accuracy));
}

TEST(Evaluation, RecordsSurviveTheGatherAndMerge) {
  Evaluation server;
  server.has_global = true;
  server.global = {0.7, 0.8, 100};
  server.devices[1] = {0.5, 0.9, 40};
  Evaluation device;
  device.devices[2] = {0.6, 0.75, 60};
  std::vector<Evaluation> gathered;
  for (const Evaluation* e : {static_cast<const Evaluation*>(&server), static_cast<const Evaluation*>(nullptr),
                              static_cast<const Evaluation*>(&device)}) {
    gathered.push_back(evaluation_from_doubles(evaluation_to_doubles(e)));
  }
  const Evaluation merged = merge_evaluations(gathered);
  EXPECT_TRUE(merged.has_global);
  EXPECT_DOUBLE_EQ(merged.global.accuracy, 0.8);
  ASSERT_EQ(merged.devices.size(), 2u);
  EXPECT_DOUBLE_EQ(merged.devices.at(2).accuracy, 0.75);
  EXPECT_EQ(merged.devices.at(1).samples, 40);
  EXPECT_THROW(merge_evaluations({server, server}), std::logic_error);
  EXPECT_THROW(evaluation_from_doubles({1.0, 2.0}), std::invalid_argument);
}

// The trivial rate: test labels 3 x class 0, 5 x class 1, 2 x class 2. Globally the best
// constant answer is class 1: 0.5. Per device: device 1 trains on classes 0 and 1 in
// equal shares (either answer scores 0.5 on its 8 test samples), device 2 on class 2
// only (answering 2 scores 1 on its 2): (0.5 x 8 + 1 x 2) / 10 = 0.6.
TEST(Evaluation, TrivialAccuracyIsTheBestConstantAnswerScoredAsTheScopeScores) {
  const std::vector<std::uint8_t> test = {0, 1, 1, 0, 2, 1, 1, 0, 2, 1};
  const std::vector<std::uint8_t> train = {0, 1, 2, 2, 0, 1};
  const std::vector<std::vector<std::size_t>> partitions = {{0, 1, 4, 5}, {2, 3}};
  EXPECT_DOUBLE_EQ(trivial_accuracy(test, 3, train, partitions, EvaluationScope::global), 0.5);
  EXPECT_DOUBLE_EQ(trivial_accuracy(test, 3, train, partitions, EvaluationScope::per_device), 0.6);
  EXPECT_THROW(trivial_accuracy({0, 3}, 3, train, partitions, EvaluationScope::global), std::out_of_range);
}

TEST(Evaluation, ScopeNames) {
  EXPECT_EQ(evaluation_scope("global"), EvaluationScope::global);
  EXPECT_EQ(evaluation_scope("per-device"), EvaluationScope::per_device);
  EXPECT_ANY_THROW(evaluation_scope("device"));
}

}  // namespace
}  // namespace cmlbed::train
