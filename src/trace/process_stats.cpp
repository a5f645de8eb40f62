#include "cmlbed/trace/process_stats.hpp"

#include <time.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace cmlbed::trace {

std::int64_t boottime_now_ns() {
  timespec now{};
  clock_gettime(CLOCK_BOOTTIME, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

std::int64_t process_cpu_ns() {
  timespec used{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &used);
  return static_cast<std::int64_t>(used.tv_sec) * 1000000000 + used.tv_nsec;
}

std::optional<std::int64_t> process_start_ns() {
  std::ifstream stat("/proc/self/stat");
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  // Field 2 (the command name, in parentheses) may hold spaces and parentheses: count
  // fields from the last ')'. Field 22 is the start time in clock ticks since boot.
  const std::size_t name_end = line.rfind(')');
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(name_end + 1));
  std::string field;
  for (int index = 3; index <= 22; ++index) {
    if (!(rest >> field)) return std::nullopt;
  }
  const long ticks_per_second = sysconf(_SC_CLK_TCK);
  if (ticks_per_second <= 0) return std::nullopt;
  try {
    const long long ticks = std::stoll(field);
    return static_cast<std::int64_t>(ticks) * (1000000000 / ticks_per_second);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

MemoryUse memory_use() {
  MemoryUse use;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    // Lines such as "VmHWM:	  123456 kB".
    std::istringstream words(line);
    std::string key;
    long long kib = 0;
    if (!(words >> key >> kib)) continue;
    if (key == "VmRSS:") use.rss_bytes = kib * 1024;
    if (key == "VmHWM:") use.peak_rss_bytes = kib * 1024;
  }
  std::ifstream rollup("/proc/self/smaps_rollup");  // Linux 4.14 and later
  while (std::getline(rollup, line)) {
    std::istringstream words(line);
    std::string key;
    long long kib = 0;
    if (words >> key >> kib && key == "Pss:") use.pss_bytes = kib * 1024;
  }
  return use;
}

}  // namespace cmlbed::trace
