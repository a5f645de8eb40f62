#pragma once
// One rule for a run's random streams: the seed of the stream that serves `purpose` (a
// fixed name, e.g. "dropout") at `indices` (e.g. the layer, or the rank and round), from
// experiment.seed. splitmix64 over a hash of the name and then each index in turn, so
// nearby seeds, purposes and indices give unrelated streams
// (docs/explanation/seeds.md lists which draws take their seed from here).
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace cmlbed {

// One step of splitmix64: the mixer every seed derivation of the project uses.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// FNV-1a: a stable hash of a name (std::hash may differ between libraries).
constexpr std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t hash = 0xCBF29CE484222325ULL;
  for (const char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001B3ULL;
  return hash;
}

// The rule's version, stored in checkpoints: a resumed run draws its remaining rounds
// from the rule its first rounds drew from, or refuses (1: the formulas of each draw
// before this rule; 2: stream_seed for every draw).
constexpr int kSeedRule = 2;

constexpr std::uint64_t stream_seed(std::uint64_t seed, std::string_view purpose,
                                    std::initializer_list<std::int64_t> indices = {}) {
  std::uint64_t x = splitmix64(seed ^ splitmix64(fnv1a(purpose)));
  for (const std::int64_t index : indices) x = splitmix64(x ^ static_cast<std::uint64_t>(index));
  return x;
}

}  // namespace cmlbed
