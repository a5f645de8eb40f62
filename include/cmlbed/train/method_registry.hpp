#pragma once
// The code that runs each method: one factory per row of the method table
// (config/methods.hpp), by the name experiment.method gives it. What a method is (splits
// the model, averages, micro-batches, ...) lives in that table, not here. Adding a method
// = its own files, one row in src/config/methods.cpp, one factory line in
// src/train/method_registry.cpp, tests (a test checks that every row has a factory). Its
// options go in a section named after it ([pipar], [adasplit]) that by convention holds
// only that method's options (the report's baseline matching relies on it).
#include <memory>
#include <string>
#include <vector>

#include <mpi.h>

#include "cmlbed/config/settings.hpp"
#include "cmlbed/train/method.hpp"

namespace cmlbed::train {

// The names of the methods this build can run, in the registry's order.
std::vector<std::string> available_methods();

// Whether the registry has a factory for the method table's row `name`.
bool has_factory(const std::string& name);

// Throws ConfigError when this build cannot run experiment.method (cheap: builds nothing).
void check_method_available(const Settings& settings);

// The method experiment.method names, for this rank of the run's ranks `comm` (rank 0
// the server, `devices` devices). Throws ConfigError for a method this build cannot run.
std::unique_ptr<Method> make_method(const Settings& settings, int rank, int devices, MPI_Comm comm);

}  // namespace cmlbed::train
