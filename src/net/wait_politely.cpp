#include "cmlbed/net/wait_politely.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "cmlbed/net/mpi_error.hpp"

namespace cmlbed::net {

namespace {
// Open MPI cannot block a thread on a request without spinning, so this polls with a
// backoff: a request that is nearly done costs a few microseconds of latency, a long
// wait one wake-up a millisecond and at most 1 ms of latency, small against a round. A
// fixed short sleep wakes far more often (docs/explanation/architecture.md, "What
// waiting costs").
constexpr auto kFirstPause = std::chrono::microseconds(2);
constexpr auto kLongestPause = std::chrono::microseconds(1000);
}  // namespace

void wait_politely(MPI_Request& request) {
  auto pause = std::chrono::microseconds(kFirstPause);
  while (true) {
    int done = 0;
    CMLBED_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) return;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(kLongestPause));
  }
}

void barrier_politely(MPI_Comm comm) {
  MPI_Request request;
  CMLBED_MPI_CHECK(MPI_Ibarrier(comm, &request));
  wait_politely(request);
}

}  // namespace cmlbed::net
