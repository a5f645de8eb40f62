#include "cmlbed/net/wait_politely.hpp"

#include <chrono>
#include <thread>

#include "cmlbed/net/mpi_error.hpp"

namespace cmlbed::net {

void wait_politely(MPI_Request& request) {
  int done = 0;
  while (true) {
    CMLBED_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

void barrier_politely(MPI_Comm comm) {
  MPI_Request request;
  CMLBED_MPI_CHECK(MPI_Ibarrier(comm, &request));
  wait_politely(request);
}

}  // namespace cmlbed::net
