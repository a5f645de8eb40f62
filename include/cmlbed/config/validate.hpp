#pragma once
#include "cmlbed/config/config.hpp"

namespace cmlbed {

// Checks the options against each other, the model zoo, the data files and the MPI
// world size (1 server + mpi_size-1 devices). Throws ConfigError with one line naming
// the option, the value and what is allowed. Does no work and creates no file.
void validate_config(const Config& config, int mpi_size);

}  // namespace cmlbed
