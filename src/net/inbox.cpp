#include "inbox.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "cmlbed/net/chunk_pacing.hpp"
#include "cmlbed/net/mpi_error.hpp"
#include "message_tags.hpp"
#include "cmlbed/net/wake_policy.hpp"

namespace cmlbed::net::detail {

namespace {
// Chunk receives outstanding per message.
constexpr int kReceiveWindow = 8;
}  // namespace

Inbox::Inbox(MPI_Comm comm, RequestEngine& engine, std::function<std::int64_t()> now_ns,
             std::function<void(const TransferState&)> on_received)
    : comm_(comm), engine_(engine), now_ns_(std::move(now_ns)), on_received_(std::move(on_received)) {}

void Inbox::queue(const std::shared_ptr<TransferState>& state) {
  Channel& channel = channels_[{state->peer, static_cast<int>(state->wire_header.kind)}];
  channel.peer = state->peer;
  channel.kind = state->wire_header.kind;
  channel.waiting.push_back(state);
  start_next_receive(channel);
}

void Inbox::collect_waiting(std::vector<std::shared_ptr<TransferState>>& out) const {
  for (const auto& [key, channel] : channels_) {
    out.insert(out.end(), channel.waiting.begin(), channel.waiting.end());
  }
}

void Inbox::start_next_receive(Channel& channel) {
  if (channel.active || channel.waiting.empty()) return;
  channel.active = true;
  auto state = channel.waiting.front();
  MPI_Request request;
  CMLBED_MPI_CHECK(MPI_Irecv(&state->wire_header, static_cast<int>(sizeof(MessageHeader)),
                             MPI_BYTE, channel.peer, header_tag(channel.kind), comm_, &request));
  engine_.add(request, Traffic::waiting, [this, &channel, state] { on_header(channel, state); });
}

void Inbox::on_header(Channel& channel, const std::shared_ptr<TransferState>& state) {
  state->t_start_ns = now_ns_();  // first byte in
  const MessageHeader& header = state->wire_header;
  if (header.kind != channel.kind || header.sequence != channel.expected_sequence) {
    throw std::runtime_error(
        "transport: message order violated on the " + std::string(to_string(channel.kind)) +
        " channel from rank " + std::to_string(channel.peer) + ": expected #" +
        std::to_string(channel.expected_sequence) + ", got " + header.describe());
  }
  if (header.bytes < 0 || (header.bytes > 0 && header.chunk_bytes <= 0)) {
    throw std::runtime_error("transport: corrupt header " + header.describe());
  }
  ++channel.expected_sequence;
  state->message.header = header;
  state->message.payload.resize(static_cast<std::size_t>(header.bytes));
  state->chunks_left = 0;
  for (std::int64_t offset = 0; offset < header.bytes; offset += header.chunk_bytes) {
    ++state->chunks_left;
  }
  if (state->chunks_left == 0) return finish_receive(channel, state);
  state->next_offset = 0;
  for (int i = 0; i < kReceiveWindow; ++i) post_next_chunk_receive(channel, state);
}

// Chunk receives are posted a window at a time (MPI keeps messages of one tag in order),
// so that the requests MPI_Testsome scans stay few even for a message of thousands of
// chunks.
void Inbox::post_next_chunk_receive(Channel& channel, const std::shared_ptr<TransferState>& state) {
  const MessageHeader& header = state->wire_header;
  if (state->next_offset >= header.bytes) return;
  const std::int64_t offset = state->next_offset;
  const auto bytes = static_cast<int>(std::min(header.chunk_bytes, header.bytes - offset));
  state->next_offset += bytes;
  MPI_Request request;
  CMLBED_MPI_CHECK(MPI_Irecv(state->message.payload.data() + offset, bytes, MPI_BYTE,
                             channel.peer, payload_tag(channel.kind), comm_, &request));
  const bool paced = header.chunk_interval_ns > 0;
  engine_.add(
      request, paced ? Traffic::arriving : Traffic::moving,
      [this, &channel, state] {
        if (--state->chunks_left == 0) return finish_receive(channel, state);
        post_next_chunk_receive(channel, state);
      },
      paced ? chunk_look_interval_ns(header.chunk_interval_ns, header.bytes - state->next_offset,
                                     kReceiveWindow * header.chunk_bytes, kMaxPollIntervalNs)
            : 0);
}

void Inbox::finish_receive(Channel& channel, const std::shared_ptr<TransferState>& state) {
  on_received_(*state);
  channel.waiting.pop_front();
  channel.active = false;
  state->finish();
  start_next_receive(channel);
}

}  // namespace cmlbed::net::detail
