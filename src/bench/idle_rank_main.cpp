// cmlbed-bench-idle-rank: the baseline a rank of cmlbed cannot go below, measured the
// way `cmlbed run` measures its ranks (/process in the results file): a process linked
// like cmlbed (LibTorch, Open MPI, HDF5) that loads, initialises MPI with
// MPI_THREAD_MULTIPLE, sets one intra-op thread and runs one small convolution forward
// and backward (LibTorch allocates and sets up its kernels on first use), then waits
// for the others and reports. No data, no model, no transport.
//   mpirun -np N build/cmlbed-bench-idle-rank [--json FILE]
// Rank 0 prints the medians over ranks and writes every rank's figures as JSON.
#include <torch/torch.h>

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "cmlbed/base/heap_policy.hpp"
#include "cmlbed/net/gather.hpp"
#include "cmlbed/net/mpi_session.hpp"
#include "cmlbed/net/wait_politely.hpp"
#include "cmlbed/trace/process_stats.hpp"
#include "cmlbed/trace/startup_clock.hpp"

namespace {

using namespace cmlbed;
using trace::StartupPhase;

void touch_libtorch() {
  torch::set_num_threads(1);
  const torch::Tensor input = torch::rand({16, 1, 28, 28});
  const torch::Tensor weight = torch::rand({8, 1, 3, 3}, torch::requires_grad());
  torch::conv2d(input, weight).sum().backward();
}

}  // namespace

int main(int argc, char** argv) {
  trace::startup_clock().end(StartupPhase::load);
  try {
    cmlbed::apply_heap_policy();  // as in a run
    std::string json_path = "results/bench-idle-rank.json";
    for (int i = 1; i < argc; ++i) {
      if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
        json_path = argv[++i];
      } else {
        throw std::invalid_argument(std::string("unknown argument '") + argv[i] + "'");
      }
    }
    net::MpiSession mpi(argc, argv);
    trace::startup_clock().end(StartupPhase::mpi_init);
    touch_libtorch();
    trace::startup_clock().end(StartupPhase::libtorch);
    net::barrier_politely(MPI_COMM_WORLD);  // every rank up, as at round 1 of a run

    const trace::StartupClock& clock = trace::startup_clock();
    const std::vector<double> wall = clock.phase_seconds(), cpu = clock.phase_cpu_seconds();
    const trace::MemoryUse memory = trace::memory_use();
    const auto index = [](StartupPhase phase) { return static_cast<std::size_t>(phase); };
    const std::vector<double> mine = {clock.total_seconds(),
                                      wall[index(StartupPhase::load)],
                                      cpu[index(StartupPhase::load)],
                                      wall[index(StartupPhase::mpi_init)],
                                      cpu[index(StartupPhase::mpi_init)],
                                      cpu[index(StartupPhase::libtorch)],
                                      static_cast<double>(memory.rss_bytes),
                                      static_cast<double>(memory.peak_rss_bytes)};
    const auto all = net::gather_doubles(mine, MPI_COMM_WORLD);
    if (mpi.rank() != 0) return 0;
    const std::vector<std::string> names = {"startup_s",       "load_s",      "load_cpu_s",
                                            "mpi_init_s",      "mpi_init_cpu_s", "libtorch_cpu_s",
                                            "rss_bytes",       "peak_rss_bytes"};
    bench::Json json;
    json.number("ranks", mpi.size());
    std::cout << "idle rank (" << mpi.size() << " ranks), medians over ranks:";
    for (std::size_t k = 0; k < names.size(); ++k) {
      std::vector<double> values;
      for (const auto& rank : all) values.push_back(rank.at(k));
      json.numbers(names[k], values);
      const bool bytes = names[k].find("bytes") != std::string::npos;
      std::printf(bytes ? " %s %.0f MiB" : " %s %.2f", names[k].c_str(),
                  bytes ? bench::median(values) / (1 << 20) : bench::median(values));
    }
    std::printf("\n");
    bench::write_json(json_path, json);
    std::cout << "wrote " << json_path << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "cmlbed-bench-idle-rank: " << e.what() << "\nusage: mpirun -np N cmlbed-bench-idle-rank [--json FILE]\n";
    return 2;
  }
}
