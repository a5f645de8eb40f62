#pragma once
// Incoming messages: one receive channel per (peer, kind), completed strictly in order;
// a message's header is received first, then its payload chunks a window at a time.
// Private to src/net; used by the communication thread only.
#include <mpi.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "request_engine.hpp"
#include "transfer_state.hpp"

namespace cmlbed::net::detail {

class Inbox {
 public:
  // `now_ns`: the timeline's clock; `on_received` runs when a message's last byte is
  // in, before its handle is finished.
  Inbox(MPI_Comm comm, RequestEngine& engine, std::function<std::int64_t()> now_ns,
        std::function<void(const TransferState&)> on_received);

  // Queues a posted receive on its channel (state->peer, state->wire_header.kind).
  void queue(const std::shared_ptr<TransferState>& state);
  // Every receive not finished yet.
  void collect_waiting(std::vector<std::shared_ptr<TransferState>>& out) const;

 private:
  struct Channel {
    int peer = 0;
    MessageKind kind = MessageKind::control;
    std::uint64_t expected_sequence = 0;
    std::deque<std::shared_ptr<TransferState>> waiting;
    bool active = false;
  };

  void start_next_receive(Channel& channel);
  void on_header(Channel& channel, const std::shared_ptr<TransferState>& state);
  void post_next_chunk_receive(Channel& channel, const std::shared_ptr<TransferState>& state);
  void finish_receive(Channel& channel, const std::shared_ptr<TransferState>& state);

  MPI_Comm comm_;
  RequestEngine& engine_;
  std::function<std::int64_t()> now_ns_;
  std::function<void(const TransferState&)> on_received_;
  std::map<std::pair<int, int>, Channel> channels_;  // a map: completions hold Channel&
};

}  // namespace cmlbed::net::detail
