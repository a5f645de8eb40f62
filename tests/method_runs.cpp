#include "method_runs.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "cmlbed/trace/results_file.hpp"

namespace cmlbed::train {

const std::vector<std::string> kBase = {
    "--data.dataset=synthetic", "--data.synthetic_train=1200", "--data.synthetic_test=300",
    "--model.name=lenet",       "--model.split=2",             "--train.batch_size=16",
    "--train.lr=0.05",          "--train.local_iterations=6",  "--experiment.rounds=2",
    "--output.progress=false",  "--output.overwrite=true"};

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string temp_file(const std::string& name) {
  return ::testing::TempDir() + "cmlbed_methods_" + std::to_string(::getpid()) + "_" + name + ".h5";
}

namespace {

std::string key_of(const std::string& option) { return option.substr(0, option.find('=')); }

}  // namespace

std::vector<std::string> with(const std::vector<std::string>& extra) {
  std::vector<std::string> options;
  for (const auto& a : kBase) {
    const bool overridden = std::any_of(extra.begin(), extra.end(),
                                        [&](const std::string& e) { return key_of(e) == key_of(a); });
    if (!overridden) options.push_back(a);
  }
  options.insert(options.end(), extra.begin(), extra.end());
  return options;
}

std::vector<std::string> plus(std::vector<std::string> options, const std::vector<std::string>& more) {
  options.insert(options.end(), more.begin(), more.end());
  return options;
}

Config config_of(const std::vector<std::string>& options) {
  std::vector<RawSetting> settings;
  for (const auto& a : options) {
    const auto eq = a.find('=');
    settings.push_back({a.substr(2, eq - 2), a.substr(eq + 1), "test"});
  }
  return Config::resolve({}, settings);
}

std::string run(int ranks, const std::string& name, const std::vector<std::string>& extra) {
  const std::string file = temp_file(name);
  std::string command = env("CMLBED_MPIEXEC") + " --oversubscribe -np " + std::to_string(ranks) +
                        " " + env("CMLBED_BINARY") + " run";
  for (const auto& a : with(extra)) command += " " + a;
  command += " --output.file=" + file + " > /dev/null";
  EXPECT_EQ(WEXITSTATUS(std::system(command.c_str())), 0) << command;
  return file;
}

double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(diff) / std::max(1e-30, std::sqrt(norm));
}

std::map<std::string, double> summary(const std::string& file) {
  const auto values = trace::ResultsFile::read_summary(file);
  return {values.begin(), values.end()};
}

}  // namespace cmlbed::train
