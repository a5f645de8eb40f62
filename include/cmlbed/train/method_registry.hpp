#pragma once
// Every method this build can run, by the name experiment.method gives it. Adding a
// method = its own files, one entry in src/train/method_registry.cpp, and in
// src/config/option_table.cpp its name (method_names(): config sits below train, so it
// keeps its own list; a test checks the registry against it) and its options, in a
// section named after it ([pipar], [adasplit]) that by convention holds only that
// method's options (the report's baseline matching relies on it).
#include <memory>
#include <string>
#include <vector>

#include "cmlbed/config/config.hpp"
#include "cmlbed/train/method.hpp"

namespace cmlbed::train {

// The names of the methods this build can run, in the registry's order.
std::vector<std::string> available_methods();

// Throws ConfigError when this build cannot run experiment.method (cheap: builds nothing).
void check_method_available(const Config& config);

// The method experiment.method names, for this rank. Throws ConfigError for a method
// this build cannot run.
std::unique_ptr<Method> make_method(const Config& config, int rank, int devices);

}  // namespace cmlbed::train
