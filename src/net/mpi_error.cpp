#include "cmlbed/net/mpi_error.hpp"

namespace cmlbed::net {

void throw_mpi_error(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  throw MpiError(code, std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                           ": " + std::string(text, static_cast<std::size_t>(length)));
}

}  // namespace cmlbed::net
