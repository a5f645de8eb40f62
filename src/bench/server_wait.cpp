// Server wait: what the server's main thread costs while it waits for a device in
// train::serve_in_arrival_order, which should sleep rather than poll (the figures and
// what polling cost: docs/explanation/architecture.md, "What waiting costs"). The
// device uploads one 8 MiB activation over a 10 mbit uplink (6.7 s of link time); the
// server's main thread CPU over the wait is reported as a share of a core, with its
// context switches (each one a wake-up) per second. A first, untimed repeat warms up
// (connections, allocations), as OSU's benchmarks do.
#include <mpi.h>
#include <sys/resource.h>

#include <cstdio>
#include <thread>

#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/transport.hpp"
#include "cmlbed/net/wait_politely.hpp"
#include "cmlbed/train/method.hpp"
#include "runtime_benchmarks.hpp"

namespace cmlbed::bench {
namespace {

constexpr std::size_t kBytes = std::size_t{8} << 20;
constexpr double kRate = 10e6;

// Voluntary plus involuntary context switches of the calling thread: one per wake-up
// of a thread that sleeps between looks.
double thread_context_switches() {
  rusage usage{};
  if (getrusage(RUSAGE_THREAD, &usage) != 0) return 0;
  return static_cast<double>(usage.ru_nvcsw + usage.ru_nivcsw);
}

struct Wait {
  double seconds = 0;
  double cpu_fraction = 0;         // the server main thread's CPU / wall, over the wait
  double wakeups_per_second = 0;   // its context switches / wall
};

// One upload; the server's figures (zeros on the device).
Wait run_once(net::Transport& transport, trace::Timeline& timeline) {
  const int rank = net::comm_rank(MPI_COMM_WORLD);
  net::Payload upload = rank == 1 ? written_payload(kBytes) : net::Payload();
  net::barrier_politely(MPI_COMM_WORLD);
  Wait wait;
  if (rank == 1) {
    net::MessageHeader header;
    header.kind = net::MessageKind::activation;
    transport.send(0, header, std::move(upload)).wait();
  } else if (rank == 0) {
    double flops = 0;
    const train::RoundContext context{0,        0,        1, 1.0, transport, timeline, std::chrono::seconds(60),
                                      train::EvaluationScope::global, flops};
    std::int64_t received = 0;
    const double cpu0 = thread_cpu_seconds(), switches0 = thread_context_switches();
    const auto start = std::chrono::steady_clock::now();
    train::serve_in_arrival_order(context, net::MessageKind::activation, {{1, 1}},
                                  "activation upload", [&](int, const net::Message& message) {
                                    received += static_cast<std::int64_t>(message.payload.size());
                                  });
    wait.seconds = seconds_since(start);
    wait.cpu_fraction = (thread_cpu_seconds() - cpu0) / wait.seconds;
    wait.wakeups_per_second = (thread_context_switches() - switches0) / wait.seconds;
    if (received != static_cast<std::int64_t>(kBytes)) {
      std::fprintf(stderr, "server wait: received %lld bytes, expected %zu\n",
                   static_cast<long long>(received), kBytes);
    }
  }
  net::barrier_politely(MPI_COMM_WORLD);
  timeline.drain();
  return wait;
}

// The server waits in barrier_politely while the device sleeps `kBarrierSeconds`: the
// same figures for net::wait_politely, which clock_sync and the benchmarks use.
constexpr double kBarrierSeconds = 1.0;

Wait barrier_once() {
  const int rank = net::comm_rank(MPI_COMM_WORLD);
  net::barrier_politely(MPI_COMM_WORLD);
  Wait wait;
  const double cpu0 = thread_cpu_seconds(), switches0 = thread_context_switches();
  const auto start = std::chrono::steady_clock::now();
  if (rank == 1) {
    std::this_thread::sleep_for(std::chrono::duration<double>(kBarrierSeconds));
  }
  net::barrier_politely(MPI_COMM_WORLD);
  wait.seconds = seconds_since(start);
  wait.cpu_fraction = (thread_cpu_seconds() - cpu0) / wait.seconds;
  wait.wakeups_per_second = (thread_context_switches() - switches0) / wait.seconds;
  return wait;
}

}  // namespace

Json server_wait(const RuntimeOptions& options) {
  const int rank = net::comm_rank(MPI_COMM_WORLD);
  trace::Timeline timeline;
  net::Transport transport(MPI_COMM_WORLD, timeline, device_uplink(rank, kRate));
  run_once(transport, timeline);  // warm-up, not reported
  std::vector<double> seconds, cpu, wakeups;
  for (int repeat = 0; repeat < options.repeats; ++repeat) {
    const Wait w = run_once(transport, timeline);
    seconds.push_back(w.seconds);
    cpu.push_back(w.cpu_fraction);
    wakeups.push_back(w.wakeups_per_second);
  }
  barrier_once();  // warm-up
  std::vector<double> barrier_cpu, barrier_wakeups;
  for (int repeat = 0; repeat < options.repeats; ++repeat) {
    const Wait w = barrier_once();
    barrier_cpu.push_back(w.cpu_fraction);
    barrier_wakeups.push_back(w.wakeups_per_second);
  }
  if (rank != 0) return Json();
  std::printf("server wait: waiting in serve_in_arrival_order for 8 MiB at 10 mbit (%.2f s, "
              "median), the server's main thread used %.3f%% of a core and woke %.0f times a "
              "second (context switches)\n",
              median(seconds), 100 * median(cpu), median(wakeups));
  std::printf("server wait: in barrier_politely for %.1f s, the server's main thread used "
              "%.3f%% of a core and woke %.0f times a second\n",
              kBarrierSeconds, 100 * median(barrier_cpu), median(barrier_wakeups));
  return Json()
      .number("transfer_bytes", static_cast<double>(kBytes))
      .number("rate_bits_per_second", kRate)
      .numbers("wait_seconds", seconds)
      .numbers("server_main_thread_cpu_fraction", cpu)
      .number("median_server_main_thread_cpu_fraction", median(cpu))
      .numbers("server_main_thread_wakeups_per_second", wakeups)
      .number("median_server_main_thread_wakeups_per_second", median(wakeups))
      .number("barrier_seconds", kBarrierSeconds)
      .numbers("barrier_main_thread_cpu_fraction", barrier_cpu)
      .number("median_barrier_main_thread_cpu_fraction", median(barrier_cpu))
      .numbers("barrier_main_thread_wakeups_per_second", barrier_wakeups)
      .number("median_barrier_main_thread_wakeups_per_second", median(barrier_wakeups));
}

}  // namespace cmlbed::bench
