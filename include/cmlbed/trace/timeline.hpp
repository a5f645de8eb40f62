#pragma once
// The per-rank timeline: methods wrap every stage in a Timeline::Scope; the transport
// records its own sends and receives. Recording is an append under an uncontended lock
// into a buffer reserved up front, cheap enough to leave on always (see the recording
// benchmark). Events are drained at round boundaries and shipped to rank 0.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "cmlbed/base/thread_cpu.hpp"
#include "cmlbed/trace/event.hpp"

namespace cmlbed::trace {

class Timeline {
 public:
  // offset_ns maps this rank's steady clock to rank 0's time base (see clock_sync).
  explicit Timeline(std::int64_t offset_ns = 0, std::size_t reserve_events = 1 << 16);

  // Now in rank 0's time base, nanoseconds.
  std::int64_t now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
               .count() +
           offset_ns_;
  }
  void set_offset_ns(std::int64_t offset_ns) { offset_ns_ = offset_ns; }
  std::int64_t offset_ns() const { return offset_ns_; }

  void set_enabled(bool enabled) { enabled_ = enabled; }
  void record(const Event& event);

  // What a stretched stage multiplies (see Scope): the CPU time of the thread that runs
  // it, where that thread does all of the stage's work (one LibTorch thread), or else the
  // stage's wall time.
  enum class StretchBasis { thread_cpu, wall };
  void set_stretch_basis(StretchBasis basis) { stretch_basis_ = basis; }
  StretchBasis stretch_basis() const { return stretch_basis_; }

  // Events recorded since the last drain, in recording order.
  std::vector<Event> drain();
  // The same into `out` (cleared first), handing `out`'s storage to the timeline: a
  // caller that keeps `out` from round to round reuses two buffers forever, instead of
  // touching fresh memory every round (first touches cost page faults).
  void drain_into(std::vector<Event>& out);

  // Stages held to a length that ran longer because the real work took longer: how
  // often, and by how much (this machine too slow or too busy for the emulated device).
  // Paced stages (devices.flops) are held to FLOPs / rate; stretched ones
  // (devices.slowdown, StretchBasis::thread_cpu) to k times their thread's CPU time, which
  // they overrun when the thread waited for a core longer than the stretch leaves room for.
  struct PaceStats {
    std::int64_t paced = 0;        // stages held to a length
    std::int64_t paced_ns = 0;     // summed lengths they were held to
    std::int64_t overran = 0;      // of which the work outlasted the length
    std::int64_t overrun_ns = 0;   // summed excess over the lengths
    double worst_ratio = 0;        // largest measured / held length (0: none overran)
  };
  // Since the run began.
  PaceStats pace_stats() const;
  // Since the last call (a round's), then starts counting afresh.
  PaceStats take_interval_pace_stats();

  // Records [construction, destruction) as one event; fields are fixed at construction.
  // The one timing scope of the project, in three modes:
  // - plain (stretch 1): the stage lasts what its work takes;
  // - stretched (stretch k > 1, devices.slowdown): the scope lasts k times the work's
  //   CPU time on this thread (StretchBasis::thread_cpu; at least its wall time), the
  //   difference slept at its end, so a device k times slower than this machine can be
  //   emulated on it. The CPU time, not the wall time: a compute thread that waits for a
  //   core (another rank's stage, a communication thread woken beside it) would
  //   otherwise have each wait stretched k times as if the device's own work
  //   (docs/explanation/architecture.md, "Devices"). With StretchBasis::wall (work on
  //   several threads), k times the wall time;
  // - paced (a length, devices.flops): the scope lasts exactly that length, the work
  //   running inside it and the rest slept, so the stage's length does not depend on this
  //   machine's speed or load; work that takes longer makes the stage longer and is
  //   counted in pace_stats().
  // The event covers the stretched or paced stage.
  class Scope {
   public:
    Scope(Timeline& timeline, Event event, double stretch = 1.0)
        : timeline_(timeline), event_(event), stretch_(stretch),
          start_(std::chrono::steady_clock::now()),
          start_cpu_(stretch > 1.0 && timeline.stretch_basis() == StretchBasis::thread_cpu ? thread_cpu_time()
                                                                                             : kNoCpu) {
      event_.t_start_ns = timeline_.now_ns();
    }
    Scope(Timeline& timeline, Event event, std::chrono::nanoseconds paced_length)
        : Scope(timeline, event) {
      paced_length_ = paced_length;
    }
    ~Scope() {
      const auto measured = std::chrono::steady_clock::now() - start_;
      // Absolute deadlines: the sleep's own overshoot does not add up across stages.
      if (paced_length_.count() >= 0) {
        if (measured < paced_length_) {
          std::this_thread::sleep_until(start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(paced_length_));
        }
        timeline_.count_paced(measured, paced_length_);
        event_.held = measured > paced_length_ ? Held::overran : Held::kept;
      } else if (stretch_ > 1.0) {
        const auto basis = start_cpu_ != kNoCpu ? thread_cpu_time() - start_cpu_ : measured;
        const auto stretched = std::chrono::duration_cast<std::chrono::steady_clock::duration>(basis * stretch_);
        if (stretched > measured) std::this_thread::sleep_until(start_ + stretched);
        // Stretched from the wall time, a stage cannot run long: its waits are stretched too.
        if (start_cpu_ != kNoCpu) {
          timeline_.count_paced(measured, stretched);
          event_.held = measured > stretched ? Held::overran : Held::kept;
        }
      }
      event_.t_end_ns = timeline_.now_ns();
      timeline_.record(event_);
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    static constexpr std::chrono::nanoseconds kNoCpu{-1};

    Timeline& timeline_;
    Event event_;
    double stretch_;
    std::chrono::nanoseconds paced_length_{-1};  // < 0: not paced
    std::chrono::steady_clock::time_point start_;
    std::chrono::nanoseconds start_cpu_;  // kNoCpu: stretch the wall time
  };

 private:
  void count_paced(std::chrono::steady_clock::duration measured, std::chrono::nanoseconds paced_length);

  std::int64_t offset_ns_;
  bool enabled_ = true;
  StretchBasis stretch_basis_ = StretchBasis::thread_cpu;
  std::size_t reserve_;
  mutable std::mutex mutex_;  // the transport's thread and the main thread both record
  std::vector<Event> events_;
  PaceStats pace_, interval_pace_;  // under mutex_
};

// Shorthand for a compute-lane scope.
inline Event compute_event(EventKind kind, std::int32_t round, std::int32_t batch = -1,
                           std::int32_t micro_batch = -1) {
  Event e;
  e.lane = Lane::compute;
  e.kind = kind;
  e.round = round;
  e.batch = batch;
  e.micro_batch = micro_batch;
  return e;
}

}  // namespace cmlbed::trace
