#pragma once
// One rank's emulation-fidelity figures over a round's training: its held stages (from
// the timeline), the CPU its threads got and waited for, and the host's steal, taken as
// differences between the round's start and end.
#include "cmlbed/base/cpu_usage.hpp"
#include "cmlbed/run/emulation_verdict.hpp"
#include "cmlbed/trace/timeline.hpp"

namespace cmlbed::run {

class FidelitySampler {
 public:
  explicit FidelitySampler(trace::Timeline& timeline) : timeline_(timeline) {}
  // Before the round: forgets held stages since the last round (evaluation, hooks).
  void start();
  // After the round's training: the figures since start().
  RankFidelity stop();

 private:
  trace::Timeline& timeline_;
  CpuUsage cpu_at_start_;
  HostTicks host_at_start_;
};

}  // namespace cmlbed::run
