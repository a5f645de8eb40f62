#pragma once
// Rules of a run's round sequence that the runtime, the simulator and the re-planner
// must apply alike.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "cmlbed/base/seed_streams.hpp"

namespace cmlbed::sim {

// Whether the devices' models are averaged after `round` (0-based): every
// `aggregate_every` rounds (train.aggregate_every) and after the last of `rounds`.
constexpr bool averages_after(int round, int aggregate_every, int rounds) {
  return (round + 1) % aggregate_every == 0 || round + 1 == rounds;
}

// adasplit: how many of `rounds` rounds are local (adasplit.local_fraction, kappa), the
// first floor(kappa x rounds). The small epsilon keeps e.g. 0.6 x 10 at 6 although 0.6
// is not exact in binary.
inline int adasplit_local_rounds(double local_fraction, int rounds) {
  return static_cast<int>(std::floor(local_fraction * rounds + 1e-9));
}

// sl: one device at a time holds the device part and trains `batches` mini-batches of
// its round's schedule from `first_batch` on, then hands the part on.
struct SlTurn {
  int device = 1;
  std::int64_t first_batch = 0;
  std::int64_t batches = 0;
};

// sl's turns in one round (sl.batches_per_turn): devices 1..N in order, each for up to
// `per_turn` of its mini-batches (0: all of them), again from device 1 while any has
// mini-batches left; `batches[d-1]` is device d's count for the round.
inline std::vector<SlTurn> sl_turns(const std::vector<std::int64_t>& batches, std::int64_t per_turn) {
  std::vector<SlTurn> turns;
  for (std::int64_t first = 0;; first += per_turn) {
    const std::size_t before = turns.size();
    for (std::size_t d = 0; d < batches.size(); ++d) {
      if (first >= batches[d]) continue;
      const std::int64_t count = per_turn > 0 ? std::min(per_turn, batches[d] - first) : batches[d];
      turns.push_back({static_cast<int>(d) + 1, first, count});
    }
    if (per_turn <= 0 || turns.size() == before) return turns;
  }
}

// psl: the devices whose mini-batch b is served together, for each b of one round:
// every device with more than b mini-batches (`batches[d-1]` is device d's count), in
// ascending order, the order in which their activations are concatenated. The server
// waits for exactly these; a device that has finished its round is not waited for.
inline std::vector<std::vector<int>> psl_batches(const std::vector<std::int64_t>& batches) {
  std::vector<std::vector<int>> together;
  for (std::size_t d = 0; d < batches.size(); ++d) {
    for (std::int64_t b = 0; b < batches[d]; ++b) {
      if (together.size() <= static_cast<std::size_t>(b)) together.resize(static_cast<std::size_t>(b) + 1);
      together[static_cast<std::size_t>(b)].push_back(static_cast<int>(d) + 1);
    }
  }
  return together;
}

// sfl2 (SplitFed V2): the order in which the one server part serves the devices in
// `round` (0-based), a permutation of 1..devices drawn from (seed, round). Fisher-Yates
// over splitmix64, written out so that the runtime and the simulator draw the same order
// with any standard library (std::shuffle's algorithm is the library's own).
inline std::vector<int> device_serving_order(std::uint64_t seed, int round, int devices) {
  std::uint64_t state = stream_seed(seed, "serving_order", {round});
  const auto next = [&state] {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  };
  std::vector<int> order;
  for (int d = 1; d <= devices; ++d) order.push_back(d);
  for (int i = devices - 1; i > 0; --i) {
    std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(next() % static_cast<std::uint64_t>(i + 1))]);
  }
  return order;
}

// What of a run's round sequence depends on its number of rounds.
struct RoundSequence {
  bool averages = false;         // fl, sfl, pipar: averaging every aggregate_every rounds
  int aggregate_every = 1;
  bool local_phase = false;      // adasplit: the first rounds are local
  double local_fraction = 0;
};

// A done round that a run of another round count would have run otherwise.
struct RoundRunOtherwise {
  int round = -1;          // 0-based; -1: none
  bool averaging = false;  // the average after it (else: local or global)
};

// The first of the `done` rounds that a run of `now_rounds` rounds would run otherwise
// than a run of `then_rounds` did (averaged or not after it; local or global); none
// (round -1): a resumed run may change the number of rounds without changing what its
// rounds so far computed.
inline RoundRunOtherwise first_round_run_otherwise(const RoundSequence& s, int then_rounds, int now_rounds,
                                                   int done) {
  for (int round = 0; round < done; ++round) {
    if (s.averages && averages_after(round, s.aggregate_every, then_rounds) !=
                          averages_after(round, s.aggregate_every, now_rounds)) {
      return {round, true};
    }
    if (s.local_phase && (round < adasplit_local_rounds(s.local_fraction, then_rounds)) !=
                             (round < adasplit_local_rounds(s.local_fraction, now_rounds))) {
      return {round, false};
    }
  }
  return {};
}

}  // namespace cmlbed::sim
