#pragma once
// Ranks on one host share its cores: processor sharing of their stages' CPU work. A pass
// of the simulator books every stretch of work it schedules (start, end, cores asked);
// the next pass reads that load, n(t), and lets work starting at t progress at
// min(1, C / n(t)). Passes repeat until the rounds stop moving (schedule_simulator.cpp):
// the schedule and the load it causes then agree.
//
// A thread woken while every core is busy waits for a running thread's slice to end: a
// message that arrives then reaches the thread that waits for it after kWakeHandOvers
// such waits (the sender's communication thread releasing the last chunk, the
// receiver's looking for it, the receiver's compute thread woken by it), each half a
// slice on average (wake_latency_ns).
#include <cstdint>
#include <utility>
#include <vector>

namespace cmlbed::sim {

constexpr int kWakeHandOvers = 3;

class HostCores {
 public:
  // slice_ns: the scheduler's slice on this host (0: wake-ups cost nothing).
  explicit HostCores(int cores, std::int64_t slice_ns = 0);

  int cores() const { return cores_; }

  // The wall time of `work_s` seconds of CPU work started at start_ns, under the load the
  // previous pass booked (none before the first pass ends: full speed). Where more work
  // is asked for than there are cores, the scheduler switches the thread out after every
  // slice of its own, and it comes back to caches the others have filled: each slice
  // then costs `switch_work_s` more work (the profile's wake_s: a pass after a sleep less
  // one right after another), so the work progresses at slice / (slice + switch_work_s)
  // of its share of the cores.
  std::int64_t wall_ns(std::int64_t start_ns, double work_s, double switch_work_s = 0) const {
    return run(start_ns, work_s, switch_work_s).wall_ns;
  }

  // The same work's wall time and the CPU time its thread is charged for it: the work,
  // and in oversubscribed steps the switch work of every slice too (what a thread's CPU
  // clock reads, and so what devices.slowdown stretches: Timeline::Scope's thread_cpu).
  struct SharedRun {
    std::int64_t wall_ns = 0;
    double cpu_s = 0;
  };
  SharedRun run(std::int64_t start_ns, double work_s, double switch_work_s = 0) const;

  // How late a message arriving at t is seen by the thread waiting for it: under the
  // load the previous pass booked, kWakeHandOvers half slices when every core is asked
  // for at t, else 0.
  std::int64_t wake_latency_ns(std::int64_t t) const;

  // Work running on [start_ns, end_ns) on `threads` cores, for the next pass's load.
  void book(std::int64_t start_ns, std::int64_t end_ns, int threads);

  // Ends a pass: what it booked becomes the load wall_ns reads; the booking starts empty.
  void next_pass();

  // Whether the work booked in this pass took, all together, within `tolerance`
  // (relative) of the wall time it took in the pass before (the work of a paced stage can
  // grow without the stage growing, until it does).
  bool settled(double tolerance) const;

 private:
  // The index of the step t falls in (steps start at times_[i - 1]; 0: before the first),
  // and the cores asked for in step i.
  std::size_t step_at(std::int64_t t) const;
  int load_in(std::size_t step) const;

  int cores_;
  std::int64_t slice_ns_;
  // The load as a step function: from times_[i] on (until times_[i + 1]), load_[i] cores
  // are asked for; before times_[0] and after the last step, none.
  std::vector<std::int64_t> times_;
  std::vector<int> load_;
  std::vector<std::pair<std::int64_t, int>> booked_;  // (time, +threads at a start, -threads at an end)
  double booked_wall_ns_ = 0, previous_wall_ns_ = -1;  // the work's wall time, this pass and the one before
};

}  // namespace cmlbed::sim
