#pragma once
// Rules of a run's round sequence that the runtime, the simulator and the re-planner
// must apply alike.

namespace cmlbed::plan {

// Whether the devices' models are averaged after `round` (0-based): every
// `aggregate_every` rounds (train.aggregate_every) and after the last of `rounds`.
constexpr bool averages_after(int round, int aggregate_every, int rounds) {
  return (round + 1) % aggregate_every == 0 || round + 1 == rounds;
}

}  // namespace cmlbed::plan
