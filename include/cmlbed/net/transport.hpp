#pragma once
// Moves messages between ranks with non-blocking MPI on a duplicated communicator.
//
// Open MPI 4.1 has no asynchronous progress: a large MPI_Isend over TCP does not move
// while its rank computes without calling MPI (DESIGN.md). So the transport owns a
// communication thread that posts every MPI_Isend/MPI_Irecv, drives them with
// MPI_Testsome, and paces outgoing chunks through the rank's emulated links. The main
// thread only enqueues sends and posts receives and gets handles back at once.
//
// Messages between two ranks are ordered per kind; the receiver checks each header's
// kind and sequence number and fails loudly on a mismatch.
#include <mpi.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "cmlbed/net/link.hpp"
#include "cmlbed/net/message.hpp"
#include "cmlbed/trace/timeline.hpp"

namespace cmlbed::net {

namespace detail {
struct TransferState;
}

// [[nodiscard]]: a send whose handle nobody keeps is a send whose failure nobody sees
// (the compiler warns); say detach() when that is meant.
class [[nodiscard]] SendHandle {
 public:
  SendHandle() = default;
  explicit SendHandle(std::shared_ptr<detail::TransferState> state) : state_(std::move(state)) {}
  bool done() const;  // the last byte has left (all chunks' sends completed)
  MessageKind kind() const;
  void wait() const;  // rethrows a transport failure
  bool wait_for(std::chrono::nanoseconds timeout) const;
  // Forgets the send: it still completes (the communication thread keeps the payload
  // until the last chunk has left), and a failure shows on the transport's next call.
  void detach() { state_.reset(); }

 private:
  std::shared_ptr<detail::TransferState> state_;
};

class RecvHandle {
 public:
  RecvHandle() = default;
  explicit RecvHandle(std::shared_ptr<detail::TransferState> state) : state_(std::move(state)) {}
  bool ready() const;
  MessageKind kind() const;  // what was posted for
  Message wait();  // takes the message; rethrows a transport failure
  // The message if it completes within the timeout, else nothing (the receive stays posted).
  std::optional<Message> wait_for(std::chrono::nanoseconds timeout);

 private:
  friend std::optional<std::size_t> wait_any(const std::vector<const RecvHandle*>& handles,
                                             std::chrono::steady_clock::time_point deadline);
  std::shared_ptr<detail::TransferState> state_;
};

// Blocks until one of `handles` has completed (or failed) or `deadline` passes, and
// returns the index of a completed one (nothing at the deadline): of several, the one
// that completed first. It sleeps on a completion signal that the communication thread
// raises when a transfer ends, so it never polls (each wake-up costs tens of
// microseconds on these machines). A failed transfer counts as completed: its wait()
// rethrows the failure. Throws std::invalid_argument for a handle without a receive.
std::optional<std::size_t> wait_any(const std::vector<const RecvHandle*>& handles,
                                    std::chrono::steady_clock::time_point deadline);

struct TransportStats {
  std::int64_t bytes_sent = 0;      // payload bytes whose sends completed
  std::int64_t bytes_received = 0;  // payload bytes of completed receives
  std::int64_t messages_sent = 0;     // sends completed
  std::int64_t messages_received = 0;  // receives completed
};

class Transport {
 public:
  // `outgoing_links`: the emulated link towards each peer this rank sends to (a device:
  // {0: its uplink}; the server: {d: the downlink to device d}); a peer without an entry
  // is reached unshaped. Link times run on the timeline's clock. The links start (bucket
  // full, rate traces at time 0) at `links_started_ns` on that clock, default now; a
  // resumed run passes a time in the past, so that rate traces continue where the
  // interrupted run left them.
  Transport(MPI_Comm comm, trace::Timeline& timeline, const std::map<int, LinkSpec>& outgoing_links,
            std::optional<std::int64_t> links_started_ns = std::nullopt);
  // Finishes sends in flight, cancels receives nobody matched, stops the thread.
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Returns at once; the payload is kept until the last chunk has left. The header's
  // kind/round/batch/micro-batch/dtype/shape are the caller's; sizes and sequence are
  // filled in here. Shaping::none sends past the link's token bucket and delay: for
  // traffic the emulated links must not see (evaluation); it still leaves after what is
  // already queued to that peer.
  enum class Shaping { link, none };
  SendHandle send(int peer, MessageHeader header, Payload payload, Shaping shaping = Shaping::link);
  // Posts a receive for the next message of `kind` from `peer` (may be posted ahead).
  RecvHandle post_recv(int peer, MessageKind kind);
  Message recv(int peer, MessageKind kind) { return post_recv(peer, kind).wait(); }

  int rank() const;
  int size() const;
  TransportStats stats() const;
  // Whether transfers sent or posted from now on go into stats() (true at first). The
  // runs turn it off between rounds, so that the evaluation's traffic and a re-split's
  // are no round's, as the timeline leaves them out.
  void set_counting(bool counting);
  // CPU time the communication thread has used so far (its thread CPU clock), seconds.
  double communication_thread_cpu_seconds() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace cmlbed::net
