#pragma once
// What the kernel's scheduler gave this process, against what it asked for: the figures
// that say whether a rank got the cores the emulation assumed (docs/explanation/fidelity.md).
// A thread that is runnable but not running waits in a run queue; that wait is CPU the
// rank wanted and did not get, so its stages took longer than their work.
#include <cstdint>
#include <set>

namespace cmlbed {

// The transport's communication thread names itself so (net/transport.cpp): its waits
// for a core delay messages by a wake-up each, not the compute stages, so they are
// counted apart from the other threads'.
constexpr const char* kNetworkThreadName = "cmlbed-net";

struct CpuUsage {
  std::int64_t cpu_ns = 0;       // time on a CPU, every live thread but the network thread
  std::int64_t runqueue_ns = 0;  // time runnable but waiting for a CPU, the same threads
  std::int64_t network_cpu_ns = 0, network_runqueue_ns = 0;  // the network thread's
  std::int64_t involuntary_switches = 0;  // preemptions (getrusage ru_nivcsw, whole process)
};

// From /proc/self/task/*/schedstat (Linux: "cpu_ns runqueue_ns timeslices") and getrusage.
// Threads that ended are no longer counted, so take differences over intervals in which
// the process keeps its threads (a round). Zero figures where /proc lacks schedstat
// (kernels without CONFIG_SCHEDSTATS report it all the same since 4.x, as zeros otherwise).
CpuUsage process_cpu_usage();

// The host's CPU time so far, in clock ticks over all CPUs (/proc/stat's first line): all
// of it and the part the hypervisor gave to other guests (steal). Zeros if unreadable.
struct HostTicks {
  std::int64_t total = 0;
  std::int64_t steal = 0;
};
HostTicks host_ticks();

// The CPUs this process may run on (sched_getaffinity); empty where it cannot be read.
std::set<int> usable_cpus();

}  // namespace cmlbed
