#pragma once
// What an evaluation finds, and how per-device scores come from one pass over the test
// set. Evaluation runs on every rank after the round's timed window (see experiment.cpp);
// each rank reports what it scored.
//
// Per-device scope (evaluation.scope = per-device): device d is scored on the test
// samples of the classes it trains on, each class weighted by its share of d's training
// samples: accuracy_d = sum_c share_d(c) * accuracy(c). With data.partition = shards a
// device's classes count equally (its shares are equal); with dirichlet a device that
// trains on 90% class 3 and 10% class 5 is scored 0.9 acc(3) + 0.1 acc(5); with iid
// every device gets about the global accuracy. The run's test accuracy is then the mean
// of the device scores weighted by the test samples of each device's classes.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cmlbed::train {

enum class EvaluationScope { global, per_device };
EvaluationScope evaluation_scope(const std::string& name);  // "global" | "per-device"

struct Score {
  double loss = 0;
  double accuracy = 0;
  std::int64_t samples = 0;  // test samples behind the score
};

// One rank's evaluation: a global score (the server, global scope) and/or scores of
// devices (by rank) that this rank computed.
struct Evaluation {
  bool has_global = false;
  Score global;
  std::map<int, Score> devices;
};

// Per-class sums of one pass of a model over the test set.
struct ClassScores {
  std::vector<std::int64_t> samples;
  std::vector<std::int64_t> correct;
  std::vector<double> loss;  // summed cross-entropy
};

Score overall_score(const ClassScores& scores);

// Each class's share of a device's training samples (sums to 1 over the classes).
std::vector<double> label_shares(const std::vector<std::uint8_t>& labels,
                                 const std::vector<std::size_t>& partition, std::size_t classes);

// The device's score: per-class accuracy and loss weighted by `shares` (classes without
// test samples are left out and the rest renormalised); samples = test samples of the
// classes with a non-zero share.
Score device_score(const ClassScores& scores, const std::vector<double>& shares);

// The sample-weighted mean of device scores (NaN loss/accuracy when there are none).
Score weighted_mean(const std::map<int, Score>& devices);

// The trivial rate: the accuracy of a model that always answers one class, the best such
// class, scored as an evaluation of `scope` scores. Global: the test set's most common
// class's share. Per device: each device answers its own best class (one of its
// training classes), scored by device_score and averaged by weighted_mean. An accuracy
// is only worth reporting beside it: a method at this rate has learnt nothing.
double trivial_accuracy(const std::vector<std::uint8_t>& test_labels, std::size_t classes,
                        const std::vector<std::uint8_t>& train_labels,
                        const std::vector<std::vector<std::size_t>>& partitions, EvaluationScope scope);

// For the driver's gather at rank 0: one rank's evaluation as doubles (empty for none)
// and back, and every rank's evaluations merged into one.
std::vector<double> evaluation_to_doubles(const Evaluation* evaluation);
Evaluation evaluation_from_doubles(const std::vector<double>& values);
Evaluation merge_evaluations(const std::vector<Evaluation>& evaluations);

}  // namespace cmlbed::train
