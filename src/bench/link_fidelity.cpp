// Link fidelity: messages of several sizes from device to server over links of several
// rates. Each message starts with a full bucket, so the time to move it should be
// (size - burst) / rate; goodput after the burst should equal the rate.
#include <mpi.h>

#include <thread>

#include "cmlbed/base/units.hpp"
#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/transport.hpp"
#include "runtime_benchmarks.hpp"

namespace cmlbed::bench {

Json link_fidelity(const RuntimeOptions& options) {
  const int rank = net::comm_rank(MPI_COMM_WORLD);
  const std::uint64_t burst = parse_size_bytes(options.burst);
  std::vector<Json> rows;
  for (const std::string& rate_text : options.rates) {
    const double rate = parse_rate_bits_per_second(rate_text);
    for (int mib : options.sizes_mib) {
      if (options.quick && mib > 8 && rate < 100e6) continue;
      const std::size_t bytes = static_cast<std::size_t>(mib) << 20;
      trace::Timeline timeline;
      net::Transport transport(MPI_COMM_WORLD, timeline, device_uplink(rank, rate, burst));
      std::vector<double> seconds;
      for (int repeat = -options.warmup; repeat < options.repeats; ++repeat) {  // < 0: warm-up
        // Let the bucket fill up again: every message is a "first" message.
        std::this_thread::sleep_for(std::chrono::milliseconds(50) +
                                    std::chrono::nanoseconds(static_cast<std::int64_t>(burst * 8 / rate * 1e9)));
        net::RecvHandle incoming;
        if (rank == 0) incoming = transport.post_recv(1, net::MessageKind::activation);
        net::Payload upload = rank == 1 ? written_payload(bytes) : net::Payload();
        CMLBED_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        const auto start = std::chrono::steady_clock::now();
        if (rank == 0) {
          incoming.wait();
          if (repeat >= 0) seconds.push_back(seconds_since(start));
        } else if (rank == 1) {
          net::MessageHeader header;
          header.kind = net::MessageKind::activation;
          transport.send(0, header, std::move(upload)).wait();
        }
      }
      if (rank != 0) continue;
      const double measured = median(seconds);
      const double analytic = static_cast<double>(bytes - burst) * 8 / rate;
      const double goodput_after_burst = static_cast<double>(bytes - burst) * 8 / measured;
      std::printf("link %-8s %3d MiB  median %8.3f s  analytic %8.3f s  time ratio %.4f  "
                  "goodput after burst %.2f%% of rate\n",
                  rate_text.c_str(), mib, measured, analytic, measured / analytic,
                  100 * goodput_after_burst / rate);
      std::fflush(stdout);
      rows.push_back(Json()
                         .text("rate", rate_text)
                         .number("rate_bits_per_second", rate)
                         .number("bytes", static_cast<double>(bytes))
                         .numbers("seconds", seconds)
                         .number("median_seconds", measured)
                         .number("analytic_seconds", analytic)
                         .number("time_ratio", measured / analytic)
                         .number("goodput_after_burst_bits_per_second", goodput_after_burst)
                         .number("goodput_fraction_of_rate", goodput_after_burst / rate)
                         .number("goodput_bits_per_second", static_cast<double>(bytes) * 8 / measured));
    }
  }
  return Json().text("burst", options.burst).number("burst_bytes", static_cast<double>(burst)).objects("results", rows);
}

}  // namespace cmlbed::bench
