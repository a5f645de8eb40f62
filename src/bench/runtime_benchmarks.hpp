#pragma once
// The runtime benchmarks (issue: MPI runtime). Each runs on ranks 0 (server) and 1
// (device) of MPI_COMM_WORLD and returns its JSON on rank 0.
#include <string>
#include <vector>

#include "bench_util.hpp"

namespace cmlbed::bench {

struct RuntimeOptions {
  int repeats = 3;
  std::vector<std::string> rates = {"10mbit", "100mbit", "1gbit"};
  std::vector<int> sizes_mib = {1, 8, 64};
  std::string burst = "32kb";
  bool quick = false;  // skip messages > 8 MiB on links < 100 mbit (54 s each at 10 mbit)
};

Json link_fidelity(const RuntimeOptions& options);
Json compute_overlap(const RuntimeOptions& options);
Json unshaped_throughput(const RuntimeOptions& options);
Json recording_cost(const RuntimeOptions& options);

}  // namespace cmlbed::bench
