#include "cmlbed/net/chunk_pacing.hpp"

namespace cmlbed::net {

std::int64_t chunk_look_interval_ns(std::int64_t chunk_interval_ns, std::int64_t bytes_after,
                                    std::int64_t fine_bytes, std::int64_t max_look_ns) {
  const std::int64_t fine = std::min(chunk_interval_ns / 2, max_look_ns);
  if (bytes_after <= fine_bytes) return fine;
  const auto per_group = static_cast<std::int64_t>(kChunksPerWake) * chunk_interval_ns;
  return std::max(fine, std::min(kReleaseSlackNs, per_group));
}

}  // namespace cmlbed::net
