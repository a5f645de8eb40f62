#pragma once
#include "cmlbed/config/settings.hpp"

namespace cmlbed {

// Checks the options against each other, the model zoo, the data files and the MPI
// world size (1 server + mpi_size-1 devices), the links and rate traces, and (when
// check_output, i.e. on the rank that writes it) that output.file can be created.
// output.file must be resolved (non-empty) when check_output is set.
// Throws ConfigError with one line naming the option, the value and what is allowed.
// Does no work and creates no file.
void validate_config(const Settings& settings, int mpi_size, bool check_output = false);

}  // namespace cmlbed
