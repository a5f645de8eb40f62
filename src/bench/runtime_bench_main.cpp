// cmlbed-bench-runtime: the runtime's benchmarks. Run under mpirun with 2 ranks:
//   mpirun -np 2 [--mca btl tcp,self] build/cmlbed-bench-runtime [--quick] [--repeats N]
//       [--only link|overlap|throughput|recording|server-wait] [--json FILE]
// Prints medians and writes JSON (default results/bench-runtime.json).
// --warmup N (default 1): untimed runs of each case before its timed repeats, not in the
// medians (link fidelity: each warm-up is a whole message, 54 s for 64 MiB at 10 mbit).
#include <mpi.h>

#include <cstring>
#include <iostream>

#include "cmlbed/base/heap_policy.hpp"
#include "cmlbed/net/mpi_session.hpp"
#include "runtime_benchmarks.hpp"

int main(int argc, char** argv) {
  using namespace cmlbed::bench;
  cmlbed::apply_heap_policy();  // as in a run: messages' buffers come and go as there
  cmlbed::net::MpiSession mpi(argc, argv);
  RuntimeOptions options;
  std::string json_path = "results/bench-runtime.json", only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--repeats" && i + 1 < argc) {
      options.repeats = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--warmup" && i + 1 < argc) {
      options.warmup = std::max(0, std::atoi(argv[++i]));
    } else if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else {
      if (mpi.rank() == 0) {
        std::cerr << "usage: mpirun -np 2 cmlbed-bench-runtime [--quick] [--repeats N] "
                     "[--warmup N] "
                     "[--only link|overlap|throughput|recording|server-wait] [--json FILE]\n";
      }
      return 2;
    }
  }
  if (mpi.size() != 2) {
    if (mpi.rank() == 0) std::cerr << "cmlbed-bench-runtime: run it with exactly 2 MPI ranks\n";
    return 2;
  }
  Json results;
  results.number("repeats", options.repeats)
      .number("warmup", options.warmup)
      .text("statistic", "median");
  if (only.empty() || only == "recording") results.object("recording", recording_cost(options));
  if (only.empty() || only == "throughput") results.object("unshaped_throughput", unshaped_throughput(options));
  if (only.empty() || only == "overlap") results.object("overlap", compute_overlap(options));
  if (only.empty() || only == "link") results.object("link_fidelity", link_fidelity(options));
  if (only.empty() || only == "server-wait") results.object("server_wait", server_wait(options));
  if (mpi.rank() == 0) {
    write_json(json_path, results);
    std::cout << "wrote " << json_path << "\n";
  }
  return 0;
}
