#pragma once
// Ranks on one host share its cores: processor sharing of their stages' CPU work. A pass
// of the simulator books every stretch of work it schedules (start, end, cores asked);
// the next pass reads that load, n(t), and lets work starting at t progress at
// min(1, C / n(t)). Passes repeat until the rounds stop moving (schedule_simulator.cpp):
// the schedule and the load it causes then agree.
#include <cstdint>
#include <utility>
#include <vector>

namespace cmlbed::plan {

class HostCores {
 public:
  explicit HostCores(int cores);

  // The wall time of `work_s` seconds of CPU work started at start_ns, under the load the
  // previous pass booked (none before the first pass ends: full speed).
  std::int64_t wall_ns(std::int64_t start_ns, double work_s) const;

  // Work running on [start_ns, end_ns) on `threads` cores, for the next pass's load.
  void book(std::int64_t start_ns, std::int64_t end_ns, int threads);

  // Ends a pass: what it booked becomes the load wall_ns reads; the booking starts empty.
  void next_pass();

  // Whether the work booked in this pass took, all together, within `tolerance`
  // (relative) of the wall time it took in the pass before (the work of a paced stage can
  // grow without the stage growing, until it does).
  bool settled(double tolerance) const;

 private:
  int cores_;
  // The load as a step function: from times_[i] on (until times_[i + 1]), load_[i] cores
  // are asked for; before times_[0] and after the last step, none.
  std::vector<std::int64_t> times_;
  std::vector<int> load_;
  std::vector<std::pair<std::int64_t, int>> booked_;  // (time, +threads at a start, -threads at an end)
  double booked_wall_ns_ = 0, previous_wall_ns_ = -1;  // the work's wall time, this pass and the one before
};

}  // namespace cmlbed::plan
