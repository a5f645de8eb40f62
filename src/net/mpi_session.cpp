#include "cmlbed/net/mpi_session.hpp"

#include <climits>
#include <stdexcept>
#include <vector>

#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/wait_politely.hpp"

namespace cmlbed::net {

MpiSession::MpiSession(int& argc, char**& argv) {
  int provided = MPI_THREAD_SINGLE;
  CMLBED_MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  if (provided < MPI_THREAD_MULTIPLE) {
    MPI_Finalize();
    throw std::runtime_error(
        "the MPI library does not provide MPI_THREAD_MULTIPLE, which cmlbed's communication "
        "thread needs; use an MPI built with thread support (Debian's Open MPI has it)");
  }
  rank_ = comm_rank(MPI_COMM_WORLD);
  size_ = comm_size(MPI_COMM_WORLD);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

DuplicatedComm::DuplicatedComm(MPI_Comm comm) {
  CMLBED_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  CMLBED_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
}

DuplicatedComm::~DuplicatedComm() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

std::optional<std::string> agree_on_error(const std::optional<std::string>& local_error,
                                          MPI_Comm comm) {
  const int rank = comm_rank(comm);
  const int mine = local_error ? rank : INT_MAX;
  int first = INT_MAX;
  // Waited for politely: ranks that arrive early (devices, while the server builds one
  // replica of the model per device) would otherwise spin in Open MPI and take the
  // cores from the rank everyone waits for (docs/explanation/architecture.md, "What
  // waiting costs").
  MPI_Request request;
  CMLBED_MPI_CHECK(MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm, &request));
  wait_politely(request);
  if (first == INT_MAX) return std::nullopt;
  int length = first == rank ? static_cast<int>(local_error->size()) : 0;
  CMLBED_MPI_CHECK(MPI_Ibcast(&length, 1, MPI_INT, first, comm, &request));
  wait_politely(request);
  std::vector<char> text(static_cast<std::size_t>(length));
  if (first == rank) text.assign(local_error->begin(), local_error->end());
  CMLBED_MPI_CHECK(MPI_Ibcast(text.data(), length, MPI_CHAR, first, comm, &request));
  wait_politely(request);
  const std::string message(text.begin(), text.end());
  return first == 0 ? message : "rank " + std::to_string(first) + ": " + message;
}

}  // namespace cmlbed::net
