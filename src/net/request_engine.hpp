#pragma once
// The communication thread's MPI requests: each with its traffic class (how soon it is
// worth looking at again) and what to do when it completes, driven by MPI_Testsome.
// Private to src/net; used by the communication thread only.
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace cmlbed::net::detail {

// `moving`: bytes of a message are on their way (an unshaped chunk send, a payload
// receive of an unshaped message); `waiting`: a receive posted ahead for a header that
// may come much later; `paced`: a chunk sent on a shaped link, whose next chunk is due
// only later; `arriving`: a payload receive of a shaped message, whose chunks come one
// per header.chunk_interval_ns.
enum class Traffic { moving, waiting, paced, arriving };

class RequestEngine {
 public:
  // `look_ns`: for an `arriving` request, how often to look at it.
  void add(MPI_Request request, Traffic traffic, std::function<void()> on_complete,
           std::int64_t look_ns = 0);
  // Drives MPI progress (MPI_Testsome) and runs the completion of every finished
  // request; true if any finished.
  bool test();

  bool empty() const { return requests_.empty(); }
  // The shortest look interval of the `arriving` requests, if any.
  std::optional<std::int64_t> arrival_look_ns() const;
  bool bytes_moving() const;
  bool only_paced_sends() const;
  // Cancels what is left (receives nobody matched) and waits for the cancellations.
  void cancel_all();

 private:
  std::vector<MPI_Request> requests_;
  std::vector<Traffic> traffic_;
  std::vector<std::int64_t> look_ns_;
  std::vector<std::function<void()>> on_complete_;
  std::vector<int> indices_;
};

}  // namespace cmlbed::net::detail
