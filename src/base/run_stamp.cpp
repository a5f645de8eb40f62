#include "cmlbed/base/run_stamp.hpp"

#include <ctime>

namespace cmlbed {

RunStamp now_stamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char iso[32], compact[32];
  std::strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%SZ", &utc);
  std::strftime(compact, sizeof compact, "%Y%m%d-%H%M%S", &utc);
  return {iso, compact};
}

}  // namespace cmlbed
