#pragma once
// One compute stage of a rank, on the timeline and stretched by the rank's slowdown:
// a device k times slower than this machine takes k times the measured duration (the
// difference is slept), so heterogeneous devices can be emulated on one fast host and
// oversubscribed runs stay honest. The event covers the stretched stage.
#include <chrono>
#include <thread>

#include "cmlbed/trace/timeline.hpp"

namespace cmlbed::train {

class ComputeStage {
 public:
  ComputeStage(trace::Timeline& timeline, double slowdown, trace::Event event)
      : timeline_(timeline), slowdown_(slowdown), event_(event),
        start_(std::chrono::steady_clock::now()) {
    event_.lane = trace::Lane::compute;
    event_.t_start_ns = timeline_.now_ns();
  }

  ~ComputeStage() {
    if (slowdown_ > 1.0) {
      const auto measured = std::chrono::steady_clock::now() - start_;
      // An absolute deadline: the sleep's own overshoot does not add up across stages.
      std::this_thread::sleep_until(
          start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(measured * slowdown_));
    }
    event_.t_end_ns = timeline_.now_ns();
    timeline_.record(event_);
  }

  ComputeStage(const ComputeStage&) = delete;
  ComputeStage& operator=(const ComputeStage&) = delete;

 private:
  trace::Timeline& timeline_;
  double slowdown_;
  trace::Event event_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace cmlbed::train
