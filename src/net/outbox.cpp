#include "outbox.hpp"

#include <algorithm>

#include "cmlbed/net/chunk_pacing.hpp"
#include "cmlbed/net/message_booking.hpp"
#include "cmlbed/net/mpi_error.hpp"
#include "message_tags.hpp"

namespace cmlbed::net::detail {

Outbox::Outbox(MPI_Comm comm, const std::map<int, LinkSpec>& links, std::int64_t start_ns,
               RequestEngine& engine, std::function<void(const TransferState&)> on_sent)
    : comm_(comm), engine_(engine), on_sent_(std::move(on_sent)) {
  for (const auto& [peer, spec] : links) links_.emplace(peer, Link(spec, start_ns));
}

std::int64_t Outbox::chunk_bytes(int peer, bool unshaped) const {
  const auto link = unshaped ? links_.end() : links_.find(peer);
  return static_cast<std::int64_t>(link == links_.end() ? Link::kUnshapedChunkBytes
                                                        : link->second.max_chunk_bytes());
}

void Outbox::schedule(const std::shared_ptr<TransferState>& state, std::int64_t now) {
  auto& queue = queues_[state->peer];
  const auto link = state->unshaped ? links_.end() : links_.find(state->peer);
  const auto kind = state->wire_header.kind;
  const std::size_t header = queue.size();
  queue.push_back({state, &state->wire_header, static_cast<int>(sizeof(MessageHeader)), header_tag(kind), 0, true});
  const auto& payload = state->message.payload;
  const MessageBooking booking = book_message(
      link == links_.end() ? nullptr : &link->second, payload.size(),
      static_cast<std::uint64_t>(state->wire_header.chunk_bytes), now,
      [&](std::uint64_t offset, std::uint64_t bytes, std::int64_t booked_ns) {
        queue.push_back({state, payload.data() + offset, static_cast<int>(bytes), payload_tag(kind), booked_ns,
                         offset + bytes == payload.size()});
      });
  queue[header].due_ns = booking.header_ns;
  // The header leaves first, so it can still carry the payload's booked rhythm.
  state->wire_header.chunk_interval_ns = booking.chunk_interval_ns;
  state->chunks_left = static_cast<int>(booking.payload_chunks) + 1;
  ++sends_in_flight_;
}

bool Outbox::release_due(std::int64_t now) {
  bool released = false;
  for (auto& [peer, queue] : queues_) {
    const auto link = links_.find(peer);
    const bool shaped = link != links_.end() && link->second.shaped();
    while (!queue.empty() && queue.front().due_ns <= now) {
      OutChunk chunk = queue.front();
      const bool paced = shaped && !chunk.owner->unshaped;
      queue.pop_front();
      MPI_Request request;
      CMLBED_MPI_CHECK(MPI_Isend(chunk.data, chunk.bytes, MPI_BYTE, peer, chunk.tag, comm_,
                                 &request));
      engine_.add(request, paced ? Traffic::paced : Traffic::moving,
                  [this, owner = chunk.owner] { on_chunk_sent(owner); });
      released = true;
    }
  }
  return released;
}

void Outbox::on_chunk_sent(const std::shared_ptr<TransferState>& state) {
  if (--state->chunks_left > 0) return;
  on_sent_(*state);
  --sends_in_flight_;
  state->finish();
}

std::optional<std::int64_t> Outbox::next_release_ns() const {
  std::optional<std::int64_t> next;
  for (const auto& [peer, queue] : queues_) {
    if (queue.empty()) continue;
    const std::int64_t wake = group_release_ns(queue);
    if (!next || wake < *next) next = wake;
  }
  return next;
}

std::size_t Outbox::chunks_queued() const {
  std::size_t n = 0;
  for (const auto& [peer, queue] : queues_) n += queue.size();
  return n;
}

void Outbox::collect_queued(std::vector<std::shared_ptr<TransferState>>& out) const {
  for (const auto& [peer, queue] : queues_) {
    for (const auto& chunk : queue) out.push_back(chunk.owner);
  }
}

}  // namespace cmlbed::net::detail
