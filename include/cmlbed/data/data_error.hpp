#pragma once
// The one exception type for data that is missing, unreadable or malformed.
// Callers (config validation, the CLI) catch it separately from programming
// errors, so its message must stand alone: it names the file and says what was
// expected and what was found.

#include <stdexcept>
#include <string>

namespace cmlbed::data {

class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;

  // Builds "<path>: <problem>", the form every reader uses.
  DataError(const std::string& path, const std::string& problem)
      : std::runtime_error(path + ": " + problem) {}
};

}  // namespace cmlbed::data
