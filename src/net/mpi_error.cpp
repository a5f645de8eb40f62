#include "cmlbed/net/mpi_error.hpp"

namespace cmlbed::net {

void throw_mpi_error(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  throw MpiError(code, std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                           ": " + std::string(text, static_cast<std::size_t>(length)));
}

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  CMLBED_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  return rank;
}

int comm_size(MPI_Comm comm) {
  int size = 0;
  CMLBED_MPI_CHECK(MPI_Comm_size(comm, &size));
  return size;
}

}  // namespace cmlbed::net
