#pragma once
// The runtime benchmarks. Each runs on ranks 0 (server) and 1 (device) of
// MPI_COMM_WORLD and returns its JSON on rank 0.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "cmlbed/net/link.hpp"
#include "cmlbed/net/payload.hpp"

namespace cmlbed::bench {

struct RuntimeOptions {
  int repeats = 3;
  // Untimed runs of each case before its timed repeats (OSU style), not counted in the
  // medians: the first message of a case pays one-time costs (the transport's thread
  // and buffers, TCP connection setup, the allocator growing). Honoured by link,
  // throughput and recording.
  int warmup = 1;
  std::vector<std::string> rates = {"10mbit", "100mbit", "1gbit"};
  std::vector<int> sizes_mib = {1, 8, 64};
  std::string burst = "32kb";
  bool quick = false;  // skip messages > 8 MiB on links < 100 mbit (54 s each at 10 mbit)
};

// A payload to send, written before any clock starts, as a tensor is by the stage that
// produced it: pages nobody wrote would be faulted in (and zeroed) by the kernel inside
// the send calls, and the benchmark would time that instead of the transport
// (docs/explanation/architecture.md, "Memory").
inline net::Payload written_payload(std::size_t bytes) {
  return net::Payload(bytes, std::byte{0x5a});
}

Json link_fidelity(const RuntimeOptions& options);
Json compute_overlap(const RuntimeOptions& options);
Json unshaped_throughput(const RuntimeOptions& options);
Json recording_cost(const RuntimeOptions& options);
Json server_wait(const RuntimeOptions& options);

// The outgoing links of a 2-rank benchmark: rank 1 (the device) sends through a shaped
// uplink of `rate_bits_per_second` with `burst_bytes`; rank 0 sends unshaped.
inline std::map<int, net::LinkSpec> device_uplink(int rank, double rate_bits_per_second,
                                                  std::uint64_t burst_bytes = 32 << 10) {
  if (rank != 1) return {};
  net::LinkSpec uplink;
  uplink.rate_bits_per_second = rate_bits_per_second;
  uplink.burst_bytes = burst_bytes;
  return {{0, uplink}};
}

}  // namespace cmlbed::bench
