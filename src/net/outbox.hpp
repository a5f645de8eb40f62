#pragma once
// Outgoing messages: each is cut into chunks booked on its link's token bucket when it
// is queued, and each chunk is handed to MPI (MPI_Isend) when its deadline comes.
// Private to src/net; used by the communication thread only (except chunk_bytes()).
#include <mpi.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "cmlbed/net/link.hpp"
#include "request_engine.hpp"
#include "transfer_state.hpp"

namespace cmlbed::net::detail {

class Outbox {
 public:
  // `on_sent` runs when a message's last chunk has left, before its handle is finished.
  Outbox(MPI_Comm comm, const std::map<int, LinkSpec>& links, std::int64_t start_ns,
         RequestEngine& engine, std::function<void(const TransferState&)> on_sent);

  // The chunk size towards `peer`, past its link when `unshaped` (const: safe from the
  // caller's thread).
  std::int64_t chunk_bytes(int peer, bool unshaped) const;
  // Cuts the message into chunks and books each on the link now, so chunk departures
  // follow the token bucket with absolute deadlines (no drift from chained sleeps).
  void schedule(const std::shared_ptr<TransferState>& state, std::int64_t now_ns);
  // Hands every chunk due by now_ns to MPI; true if any.
  bool release_due(std::int64_t now_ns);
  // When the thread must wake next to release chunks (see chunk_pacing.hpp).
  std::optional<std::int64_t> next_release_ns() const;
  // Nothing queued and nothing in flight.
  bool idle() const { return sends_in_flight_ == 0 && chunks_queued() == 0; }
  // Every transfer with chunks still queued.
  void collect_queued(std::vector<std::shared_ptr<TransferState>>& out) const;

 private:
  struct OutChunk {
    std::shared_ptr<TransferState> owner;
    const void* data;
    int bytes;
    int tag;
    std::int64_t due_ns;
    bool observed;  // a header or a last chunk: its departure shows in the timeline
  };

  std::size_t chunks_queued() const;
  void on_chunk_sent(const std::shared_ptr<TransferState>& state);

  MPI_Comm comm_;
  std::map<int, Link> links_;
  RequestEngine& engine_;
  std::function<void(const TransferState&)> on_sent_;
  std::map<int, std::deque<OutChunk>> queues_;
  int sends_in_flight_ = 0;
};

}  // namespace cmlbed::net::detail
