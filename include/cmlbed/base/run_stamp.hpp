#pragma once
// The moment a run (or a checkpoint) starts, in the two forms the project writes it.
#include <string>

namespace cmlbed {

struct RunStamp {
  std::string iso;      // 2026-11-29T22:25:28Z, for the results file
  std::string compact;  // 20261129-222528, for default file names
};

// Now, in UTC.
RunStamp now_stamp();

}  // namespace cmlbed
