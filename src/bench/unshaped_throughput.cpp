// Unshaped throughput: 64 MiB from rank 1 to rank 0 through the transport versus plain
// blocking MPI_Send/MPI_Recv of the same bytes, same ranks, same run.
#include <mpi.h>

#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/transport.hpp"
#include "runtime_benchmarks.hpp"

namespace cmlbed::bench {

Json unshaped_throughput(const RuntimeOptions& options) {
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  const int rank = net::comm_rank(MPI_COMM_WORLD);
  trace::Timeline timeline;
  net::Transport transport(MPI_COMM_WORLD, timeline, {});
  std::vector<double> plain, ours;
  for (int repeat = -options.warmup; repeat < options.repeats; ++repeat) {  // < 0: warm-up
    // Like the transport, plain MPI gets a fresh buffer per message (as a new tensor
    // would be), from the same allocator; what is sent is written (written_payload),
    // receive buffers stay fresh on both paths.
    net::Payload buffer = rank == 1 ? written_payload(kBytes) : net::Payload(kBytes);
    net::Payload upload = rank == 1 ? written_payload(kBytes) : net::Payload();
    CMLBED_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    auto start = std::chrono::steady_clock::now();
    if (rank == 1) CMLBED_MPI_CHECK(MPI_Send(buffer.data(), static_cast<int>(kBytes), MPI_BYTE, 0, 5, MPI_COMM_WORLD));
    if (rank == 0) CMLBED_MPI_CHECK(MPI_Recv(buffer.data(), static_cast<int>(kBytes), MPI_BYTE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    const double plain_seconds = seconds_since(start);

    net::RecvHandle incoming;
    if (rank == 0) incoming = transport.post_recv(1, net::MessageKind::activation);
    CMLBED_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    start = std::chrono::steady_clock::now();
    if (rank == 1) {
      net::MessageHeader header;
      header.kind = net::MessageKind::activation;
      transport.send(0, header, std::move(upload)).wait();
    }
    if (rank == 0) incoming.wait();
    const double our_seconds = seconds_since(start);
    if (repeat >= 0) {
      plain.push_back(plain_seconds);
      ours.push_back(our_seconds);
    }
  }
  if (rank != 0) return Json();
  const double ratio = (kBytes * 8 / median(ours)) / (kBytes * 8 / median(plain));
  std::printf("unshaped 64 MiB: MPI_Send/Recv %.1f ms (%.2f Gbit/s), transport %.1f ms "
              "(%.2f Gbit/s): transport/plain throughput = %.3f\n",
              1e3 * median(plain), kBytes * 8 / median(plain) / 1e9, 1e3 * median(ours),
              kBytes * 8 / median(ours) / 1e9, ratio);
  return Json()
      .number("bytes", static_cast<double>(kBytes))
      .numbers("plain_mpi_seconds", plain)
      .numbers("transport_seconds", ours)
      .number("median_plain_mpi_seconds", median(plain))
      .number("median_transport_seconds", median(ours))
      .number("throughput_ratio_transport_over_plain", ratio);
}

}  // namespace cmlbed::bench
