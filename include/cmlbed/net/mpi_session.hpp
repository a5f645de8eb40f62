#pragma once
#include <mpi.h>

#include <optional>
#include <string>

namespace cmlbed::net {

// MPI_Init_thread with MPI_THREAD_MULTIPLE (the transport's communication thread needs
// it) for the lifetime of the object; MPI_Finalize on destruction.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // The run's ranks: the world (a session is the process's MPI).
  MPI_Comm comm() const { return MPI_COMM_WORLD; }

 private:
  int rank_ = 0;
  int size_ = 1;
};

// A private duplicate of a communicator, freed on destruction, so that one layer's
// messages can never match another's.
class DuplicatedComm {
 public:
  explicit DuplicatedComm(MPI_Comm comm);
  ~DuplicatedComm();
  DuplicatedComm(const DuplicatedComm&) = delete;
  DuplicatedComm& operator=(const DuplicatedComm&) = delete;
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// Every rank passes its own error (or none); all ranks return the error of the lowest
// failing rank, prefixed with that rank when it is not 0, so that rank 0 can report
// one message and every rank can exit the same way instead of hanging. Waits without
// spinning a core (wait_politely).
std::optional<std::string> agree_on_error(const std::optional<std::string>& local_error,
                                          MPI_Comm comm);

}  // namespace cmlbed::net
