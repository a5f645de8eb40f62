#pragma once
#include <stdexcept>
#include <string>

namespace cmlbed {

// A problem with what the user asked for: bad option, bad value, inconsistent
// combination, missing input file. The CLI prints the message on one line and exits
// with status 2, before any work and before any output file exists.
class ConfigError : public std::runtime_error {
 public:
  // Keeps the message on one line: line breaks and tabs in what the user typed (an
  // option name, a value, a path) are shown as \n, \r and \t.
  explicit ConfigError(const std::string& message);
};

}  // namespace cmlbed
