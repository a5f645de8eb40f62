#include "cmlbed/train/evaluation.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "cmlbed/config/config_error.hpp"

namespace cmlbed::train {

EvaluationScope evaluation_scope(const std::string& name) {
  if (name == "global") return EvaluationScope::global;
  if (name == "per-device") return EvaluationScope::per_device;
  throw ConfigError("evaluation.scope = " + name + ": expected global or per-device");
}

Score overall_score(const ClassScores& scores) {
  Score total;
  double loss = 0;
  std::int64_t correct = 0;
  for (std::size_t c = 0; c < scores.samples.size(); ++c) {
    total.samples += scores.samples[c];
    correct += scores.correct[c];
    loss += scores.loss[c];
  }
  const double n = static_cast<double>(std::max<std::int64_t>(1, total.samples));
  total.loss = loss / n;
  total.accuracy = static_cast<double>(correct) / n;
  return total;
}

std::vector<double> label_shares(const std::vector<std::uint8_t>& labels,
                                 const std::vector<std::size_t>& partition, std::size_t classes) {
  std::vector<double> shares(classes, 0.0);
  for (std::size_t index : partition) {
    const std::size_t label = labels.at(index);
    if (label >= classes) throw std::out_of_range("label_shares: label beyond the class count");
    shares[label] += 1.0;
  }
  if (!partition.empty()) {
    for (double& share : shares) share /= static_cast<double>(partition.size());
  }
  return shares;
}

namespace {

// The per-class sums of a model that answers `answer` for every test sample (its loss
// is not defined: 0).
ClassScores constant_answer(const std::vector<std::int64_t>& samples, std::size_t answer) {
  ClassScores scores;
  scores.samples = samples;
  scores.correct.assign(samples.size(), 0);
  scores.loss.assign(samples.size(), 0.0);
  scores.correct[answer] = samples[answer];
  return scores;
}

}  // namespace

double trivial_accuracy(const std::vector<std::uint8_t>& test_labels, std::size_t classes,
                        const std::vector<std::uint8_t>& train_labels,
                        const std::vector<std::vector<std::size_t>>& partitions, EvaluationScope scope) {
  if (classes == 0) throw std::invalid_argument("trivial_accuracy: no classes");
  std::vector<std::int64_t> samples(classes, 0);
  for (const std::uint8_t label : test_labels) {
    if (label >= classes) throw std::out_of_range("trivial_accuracy: test label beyond the class count");
    ++samples[label];
  }
  const auto best = [&](const auto& score_of) {
    Score chosen;
    chosen.accuracy = -1;
    for (std::size_t c = 0; c < classes; ++c) {
      const Score score = score_of(constant_answer(samples, c));
      if (score.accuracy > chosen.accuracy) chosen = score;
    }
    return chosen;
  };
  if (scope == EvaluationScope::global) return best([](const ClassScores& s) { return overall_score(s); }).accuracy;
  std::map<int, Score> devices;
  for (std::size_t d = 0; d < partitions.size(); ++d) {
    const std::vector<double> shares = label_shares(train_labels, partitions[d], classes);
    devices[static_cast<int>(d) + 1] = best([&](const ClassScores& s) { return device_score(s, shares); });
  }
  return weighted_mean(devices).accuracy;
}

Score device_score(const ClassScores& scores, const std::vector<double>& shares) {
  Score score;
  double weight = 0, accuracy = 0, loss = 0;
  for (std::size_t c = 0; c < shares.size() && c < scores.samples.size(); ++c) {
    if (shares[c] <= 0 || scores.samples[c] == 0) continue;
    const double n = static_cast<double>(scores.samples[c]);
    weight += shares[c];
    accuracy += shares[c] * static_cast<double>(scores.correct[c]) / n;
    loss += shares[c] * scores.loss[c] / n;
    score.samples += scores.samples[c];
  }
  score.accuracy = weight > 0 ? accuracy / weight : std::nan("");
  score.loss = weight > 0 ? loss / weight : std::nan("");
  return score;
}

Score weighted_mean(const std::map<int, Score>& devices) {
  Score mean;
  double accuracy = 0, loss = 0;
  for (const auto& [device, score] : devices) {
    if (std::isnan(score.accuracy)) continue;
    mean.samples += score.samples;
    accuracy += score.accuracy * static_cast<double>(score.samples);
    loss += score.loss * static_cast<double>(score.samples);
  }
  const double n = static_cast<double>(mean.samples);
  mean.accuracy = mean.samples > 0 ? accuracy / n : std::nan("");
  mean.loss = mean.samples > 0 ? loss / n : std::nan("");
  return mean;
}

// Layout: has_global, global (loss, accuracy, samples), then per device (rank, loss,
// accuracy, samples).
std::vector<double> evaluation_to_doubles(const Evaluation* evaluation) {
  if (evaluation == nullptr) return {};
  std::vector<double> values = {evaluation->has_global ? 1.0 : 0.0, evaluation->global.loss,
                                evaluation->global.accuracy,
                                static_cast<double>(evaluation->global.samples)};
  for (const auto& [device, score] : evaluation->devices) {
    values.insert(values.end(), {static_cast<double>(device), score.loss, score.accuracy,
                                 static_cast<double>(score.samples)});
  }
  return values;
}

Evaluation evaluation_from_doubles(const std::vector<double>& values) {
  Evaluation evaluation;
  if (values.empty()) return evaluation;
  if (values.size() % 4 != 0) throw std::invalid_argument("evaluation_from_doubles: corrupt record");
  const auto score_at = [&](std::size_t i) {
    return Score{values[i + 1], values[i + 2], static_cast<std::int64_t>(values[i + 3])};
  };
  evaluation.has_global = values[0] != 0.0;
  evaluation.global = score_at(0);
  for (std::size_t i = 4; i < values.size(); i += 4) {
    evaluation.devices[static_cast<int>(values[i])] = score_at(i);
  }
  return evaluation;
}

Evaluation merge_evaluations(const std::vector<Evaluation>& evaluations) {
  Evaluation merged;
  for (const Evaluation& evaluation : evaluations) {
    if (evaluation.has_global) {
      if (merged.has_global) throw std::logic_error("two ranks report a global evaluation");
      merged.has_global = true;
      merged.global = evaluation.global;
    }
    for (const auto& [device, score] : evaluation.devices) {
      if (!merged.devices.emplace(device, score).second) {
        throw std::logic_error("two ranks score device " + std::to_string(device));
      }
    }
  }
  return merged;
}

}  // namespace cmlbed::train
