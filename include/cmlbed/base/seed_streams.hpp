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

constexpr std::uint64_t splitmix64_step(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

constexpr std::uint64_t stream_seed(std::uint64_t seed, std::string_view purpose,
                                    std::initializer_list<std::int64_t> indices = {}) {
  std::uint64_t name = 0xCBF29CE484222325ULL;  // FNV-1a of the purpose
  for (const char c : purpose) name = (name ^ static_cast<unsigned char>(c)) * 0x100000001B3ULL;
  std::uint64_t x = splitmix64_step(seed ^ splitmix64_step(name));
  for (const std::int64_t index : indices) x = splitmix64_step(x ^ static_cast<std::uint64_t>(index));
  return x;
}

}  // namespace cmlbed
