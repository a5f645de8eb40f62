#pragma once
#include <stdexcept>

namespace cmlbed {

// A problem with what the user asked for: bad option, bad value, inconsistent
// combination, missing input file. The CLI prints the message on one line and exits
// with status 2, before any work and before any output file exists.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace cmlbed
