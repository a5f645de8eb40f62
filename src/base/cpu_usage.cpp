#include "cmlbed/base/cpu_usage.hpp"

#include <dirent.h>
#include <sched.h>
#include <sys/resource.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace cmlbed {

CpuUsage process_cpu_usage() {
  CpuUsage usage;
  const std::unique_ptr<DIR, int (*)(DIR*)> tasks(opendir("/proc/self/task"), closedir);
  if (tasks) {
    while (const dirent* entry = readdir(tasks.get())) {
      if (entry->d_name[0] == '.') continue;
      const std::string task = std::string("/proc/self/task/") + entry->d_name;
      std::ifstream schedstat(task + "/schedstat"), comm(task + "/comm");
      long long cpu = 0, waited = 0;
      std::string name;
      // A thread that ended between readdir and the open leaves no file: skipped.
      if (!(schedstat >> cpu >> waited)) continue;
      const bool network = std::getline(comm, name) && name == kNetworkThreadName;
      (network ? usage.network_cpu_ns : usage.cpu_ns) += cpu;
      (network ? usage.network_runqueue_ns : usage.runqueue_ns) += waited;
    }
  }
  rusage self{};
  if (getrusage(RUSAGE_SELF, &self) == 0) usage.involuntary_switches = self.ru_nivcsw;
  return usage;
}

HostTicks host_ticks() {
  std::ifstream stat("/proc/stat");
  std::string line;
  HostTicks ticks;
  if (!std::getline(stat, line) || line.rfind("cpu ", 0) != 0) return ticks;
  std::istringstream fields(line.substr(4));
  // user nice system idle iowait irq softirq steal guest guest_nice; guest time is
  // already in user, so the total stops at steal.
  long long value = 0;
  for (int field = 0; field < 8 && fields >> value; ++field) {
    ticks.total += value;
    if (field == 7) ticks.steal = value;
  }
  return ticks;
}

std::set<int> usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::set<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.insert(cpu);
  }
  return cpus;
}

}  // namespace cmlbed
