#pragma once
// Whole runs of cmlbed for the method tests (test_methods.cpp, test_psl.cpp): a small
// learnable problem (kBase), mpirun of the binary the ctest names, and comparisons of the
// weights the results files hold.
#include <map>
#include <string>
#include <vector>

#include "cmlbed/config/config.hpp"

namespace cmlbed::train {

// A small problem without batch norm (micro-batches would change its statistics).
extern const std::vector<std::string> kBase;

std::string env(const char* name);
// A results file's path in the test's temporary folder, named after `name`.
std::string temp_file(const std::string& name);
// kBase with `extra` in place of the options it gives again.
std::vector<std::string> with(const std::vector<std::string>& extra);
std::vector<std::string> plus(std::vector<std::string> options, const std::vector<std::string>& more);
// The configuration of `options` (--key=value), as a run resolves it.
Config config_of(const std::vector<std::string>& options);
// Runs cmlbed under mpirun with kBase overridden by `extra`; returns the results file.
std::string run(int ranks, const std::string& name, const std::vector<std::string>& extra);
// |a - b| / |b| over the two vectors of weights.
double relative_difference(const std::vector<float>& a, const std::vector<float>& b);
// A results file's /summary.
std::map<std::string, double> summary(const std::string& file);

}  // namespace cmlbed::train
