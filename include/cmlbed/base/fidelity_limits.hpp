#pragma once
// The limits of a faithful emulation (docs/explanation/fidelity.md): the run's verdict
// (run/emulation_verdict.hpp) judges measured figures by them, and the planner prefers
// plans whose predicted figures stay within the faithful ones.
namespace cmlbed {

// Up to the first of each pair, faithful; above the second, broken; between, degraded.
struct FidelityLimits {
  double overrun_faithful = 0.01, overrun_broken = 0.10;    // held stages' overrun / held length
  double runqueue_faithful = 0.02, runqueue_broken = 0.10;  // compute threads' run-queue wait / wall time
  double steal_faithful = 0.05, steal_broken = 0.20;        // stolen / all host CPU time
};

}  // namespace cmlbed
