#pragma once
// Every MPI call's return code is checked; a failure becomes an exception carrying
// MPI's own message, the call and where it was made (like c10d's MPI_CHECK).
#include <mpi.h>

#include <stdexcept>
#include <string>

namespace cmlbed::net {

class MpiError : public std::runtime_error {
 public:
  MpiError(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);

inline void mpi_check(int code, const char* call, const char* file, int line) {
  if (code != MPI_SUCCESS) throw_mpi_error(code, call, file, line);
}

// This rank's number and the communicator's size, checked: the two calls every
// MPI-using file needs first.
int comm_rank(MPI_Comm comm);
int comm_size(MPI_Comm comm);

}  // namespace cmlbed::net

#define CMLBED_MPI_CHECK(call) ::cmlbed::net::mpi_check((call), #call, __FILE__, __LINE__)
