// Overlap: the device computes flat out (one thread, a fixed arithmetic kernel) while a
// throttled 64 MiB upload runs; its compute throughput is compared with the same
// window without a transfer, and the CPU the other threads of the process (the
// communication thread, MPI's own) used in the window is reported as a share of a core,
// with the server's communication thread receiving the upload.
#include <mpi.h>

#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/transport.hpp"
#include "cmlbed/net/wait_politely.hpp"
#include "runtime_benchmarks.hpp"

namespace cmlbed::bench {
namespace {

constexpr std::size_t kBytes = std::size_t{64} << 20;
constexpr double kRate = 200e6;  // 64 MiB at 200 mbit: about 2.7 s of link time

// Iterations of a dependent floating-point chain per second, for `seconds`.
double compute_rate(double seconds) {
  const auto start = std::chrono::steady_clock::now();
  double x = 1.0;
  std::int64_t iterations = 0;
  while (seconds_since(start) < seconds) {
    for (int i = 0; i < 4096; ++i) x = x * 1.0000001 + 1e-9;
    iterations += 4096;
  }
  volatile double sink = x;
  (void)sink;
  return static_cast<double>(iterations) / seconds_since(start);
}

struct Window {
  double compute_rate = 0;
  double other_threads_cpu_fraction = 0;  // of one core, over the window
  double communication_thread_cpu_fraction = 0;  // the transport's own thread alone
};

// Runs one window on the device (rank 1); with `transfer`, the upload runs meanwhile.
Window run_window(net::Transport& transport, bool transfer, double seconds) {
  const int rank = net::comm_rank(MPI_COMM_WORLD);
  net::RecvHandle incoming;
  if (rank == 0 && transfer) incoming = transport.post_recv(1, net::MessageKind::activation);
  net::Payload upload = rank == 1 && transfer ? written_payload(kBytes) : net::Payload();
  CMLBED_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  Window window;
  const double process0 = process_cpu_seconds(), thread0 = thread_cpu_seconds();
  const double comm0 = transport.communication_thread_cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  if (rank == 1) {
    net::SendHandle sent;
    if (transfer) {
      net::MessageHeader header;
      header.kind = net::MessageKind::activation;
      sent = transport.send(0, header, std::move(upload));
    }
    window.compute_rate = compute_rate(seconds);
    if (transfer) sent.wait();
  } else if (rank == 0 && transfer) {
    incoming.wait();
  }
  const double wall = seconds_since(start);
  const double others = (process_cpu_seconds() - process0) - (thread_cpu_seconds() - thread0);
  window.other_threads_cpu_fraction = others / wall;
  window.communication_thread_cpu_fraction =
      (transport.communication_thread_cpu_seconds() - comm0) / wall;
  // Not MPI_Barrier: Open MPI's blocking calls spin, and a server spinning through the
  // no-transfer window would load a core that the transfer window leaves idle.
  net::barrier_politely(MPI_COMM_WORLD);
  return window;
}

}  // namespace

Json compute_overlap(const RuntimeOptions& options) {
  const int rank = net::comm_rank(MPI_COMM_WORLD);
  trace::Timeline timeline;
  net::Transport transport(MPI_COMM_WORLD, timeline, device_uplink(rank, kRate));
  const double seconds = static_cast<double>(kBytes) * 8 / kRate;
  std::vector<double> alone, overlapped, comm_cpu_sender, ratio, comm_thread_cpu;
  for (int repeat = 0; repeat < options.repeats; ++repeat) {
    const Window a = run_window(transport, false, seconds);
    const Window b = run_window(transport, true, seconds);
    alone.push_back(a.compute_rate);
    overlapped.push_back(b.compute_rate);
    comm_cpu_sender.push_back(b.other_threads_cpu_fraction);
    ratio.push_back(a.compute_rate > 0 ? b.compute_rate / a.compute_rate : 0);
    comm_thread_cpu.push_back(b.communication_thread_cpu_fraction);
  }
  // The figures are the device's: bring them to rank 0, which reports.
  std::vector<double> from_device(5 * static_cast<std::size_t>(options.repeats));
  if (rank == 1) {
    std::vector<double> mine;
    for (const auto* v : {&alone, &overlapped, &comm_cpu_sender, &ratio, &comm_thread_cpu}) mine.insert(mine.end(), v->begin(), v->end());
    CMLBED_MPI_CHECK(MPI_Send(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, 0, 99, MPI_COMM_WORLD));
  } else if (rank == 0) {
    CMLBED_MPI_CHECK(MPI_Recv(from_device.data(), static_cast<int>(from_device.size()),
                              MPI_DOUBLE, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  }
  if (rank != 0) return Json();
  const std::vector<double>& receiver_comm_thread_cpu = comm_thread_cpu;  // rank 0's own
  const auto part = [&](int i) {
    return std::vector<double>(from_device.begin() + i * options.repeats,
                               from_device.begin() + (i + 1) * options.repeats);
  };
  std::printf("overlap: compute with a 64 MiB upload at 200 mbit running = %.2f%% of compute "
              "alone (median); on the device the communication thread used %.2f%% of a core, "
              "all threads but the computing one %.2f%%; the server's, receiving, %.2f%%\n",
              100 * median(part(3)), 100 * median(part(4)), 100 * median(part(2)),
              100 * median(receiver_comm_thread_cpu));
  return Json()
      .number("transfer_bytes", static_cast<double>(kBytes))
      .number("rate_bits_per_second", kRate)
      .number("window_seconds", seconds)
      .numbers("compute_rate_alone", part(0))
      .numbers("compute_rate_with_transfer", part(1))
      .numbers("throughput_ratio", part(3))
      .number("median_throughput_ratio", median(part(3)))
      .numbers("device_communication_thread_cpu_fraction", part(4))
      .number("median_device_communication_thread_cpu_fraction", median(part(4)))
      .numbers("device_other_threads_cpu_fraction", part(2))
      .number("median_device_other_threads_cpu_fraction", median(part(2)))
      .numbers("server_communication_thread_cpu_fraction", receiver_comm_thread_cpu)
      .number("median_server_communication_thread_cpu_fraction",
              median(receiver_comm_thread_cpu));
}

}  // namespace cmlbed::bench
