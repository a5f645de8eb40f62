#include "cmlbed/net/clock_sync.hpp"

#include <chrono>
#include <limits>
#include <thread>

#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/wait_politely.hpp"

namespace cmlbed::net {

std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {

constexpr int kTag = 7301;
constexpr int kTurnTag = 7302;
constexpr std::int64_t kDone = -1;                 // a "ping" that ends a device's turn
constexpr std::int64_t kGoodRttNs = 100000;        // 100 us: good enough to stop early
constexpr std::int64_t kMaxSyncNs = 2000000000;    // at most 2 s per device
constexpr int kMaxSamples = 5000;

}  // namespace

ClockEstimate synchronize_clocks(MPI_Comm comm, int samples) {
  const int rank = comm_rank(comm), size = comm_size(comm);
  ClockEstimate estimate;
  // One device at a time, so that the server answers each ping at once; the others
  // wait for their turn without spinning.
  for (int device = 1; device < size; ++device) {
    if (rank == 0) {
      int go = 1;
      CMLBED_MPI_CHECK(MPI_Send(&go, 1, MPI_INT, device, kTurnTag, comm));
      while (true) {  // the device says when it has enough samples
        std::int64_t ping = 0;
        CMLBED_MPI_CHECK(MPI_Recv(&ping, 1, MPI_INT64_T, device, kTag, comm, MPI_STATUS_IGNORE));
        if (ping == kDone) break;
        const std::int64_t server_time = steady_now_ns();
        CMLBED_MPI_CHECK(MPI_Send(&server_time, 1, MPI_INT64_T, device, kTag, comm));
      }
    } else if (rank == device) {
      int go = 0;
      MPI_Request turn;
      CMLBED_MPI_CHECK(MPI_Irecv(&go, 1, MPI_INT, 0, kTurnTag, comm, &turn));
      wait_politely(turn);
      std::int64_t best_rtt = std::numeric_limits<std::int64_t>::max();
      // At least `samples` pings; on a loaded machine (a slow round trip means a peer
      // was not scheduled) keep going, up to a bound, for a faster one.
      const std::int64_t give_up = steady_now_ns() + kMaxSyncNs;
      for (int i = 0; i < kMaxSamples && (i < samples || (best_rtt > kGoodRttNs && steady_now_ns() < give_up)); ++i) {
        const std::int64_t sent = steady_now_ns();
        CMLBED_MPI_CHECK(MPI_Send(&sent, 1, MPI_INT64_T, 0, kTag, comm));
        std::int64_t server_time = 0;
        CMLBED_MPI_CHECK(MPI_Recv(&server_time, 1, MPI_INT64_T, 0, kTag, comm, MPI_STATUS_IGNORE));
        const std::int64_t received = steady_now_ns();
        const std::int64_t rtt = received - sent;
        if (rtt < best_rtt) {
          best_rtt = rtt;
          // The server read its clock about half-way through the round trip.
          estimate.offset_ns = server_time - (sent + rtt / 2);
          estimate.uncertainty_ns = rtt / 2;
        }
      }
      const std::int64_t done = kDone;
      CMLBED_MPI_CHECK(MPI_Send(&done, 1, MPI_INT64_T, 0, kTag, comm));
    }
  }
  std::int64_t origin = rank == 0 ? steady_now_ns() : 0;
  MPI_Request broadcast;
  CMLBED_MPI_CHECK(MPI_Ibcast(&origin, 1, MPI_INT64_T, 0, comm, &broadcast));
  wait_politely(broadcast);
  estimate.offset_ns -= origin;
  return estimate;
}

std::vector<ClockEstimate> gather_clock_estimates(const ClockEstimate& mine, MPI_Comm comm) {
  const int rank = comm_rank(comm), size = comm_size(comm);
  const std::int64_t pair[2] = {mine.offset_ns, mine.uncertainty_ns};
  std::vector<std::int64_t> all(rank == 0 ? 2 * static_cast<std::size_t>(size) : 0);
  CMLBED_MPI_CHECK(MPI_Gather(pair, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, 0, comm));
  std::vector<ClockEstimate> estimates;
  for (std::size_t i = 0; i + 1 < all.size(); i += 2) estimates.push_back({all[i], all[i + 1]});
  return estimates;
}

}  // namespace cmlbed::net
