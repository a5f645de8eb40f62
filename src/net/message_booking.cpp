#include "cmlbed/net/message_booking.hpp"

#include <algorithm>

#include "cmlbed/net/message.hpp"

namespace cmlbed::net {

MessageBooking book_message(Link* link, std::uint64_t payload_bytes, std::uint64_t chunk_bytes, std::int64_t now_ns,
                            const std::function<void(std::uint64_t, std::uint64_t, std::int64_t)>& on_chunk) {
  const auto book = [&](std::uint64_t bytes) { return link == nullptr ? now_ns : link->schedule(bytes, now_ns).arrival_ns; };
  MessageBooking booking;
  booking.header_ns = book(sizeof(MessageHeader));
  booking.first_payload_ns = booking.last_ns = booking.header_ns;
  for (std::uint64_t offset = 0; offset < payload_bytes; offset += chunk_bytes) {
    const std::uint64_t bytes = std::min(chunk_bytes, payload_bytes - offset);
    booking.last_ns = book(bytes);
    if (booking.payload_chunks++ == 0) booking.first_payload_ns = booking.last_ns;
    if (on_chunk) on_chunk(offset, bytes, booking.last_ns);
  }
  if (link != nullptr && link->shaped() && booking.payload_chunks > 1) {
    booking.chunk_interval_ns = (booking.last_ns - booking.first_payload_ns) / (booking.payload_chunks - 1);
  }
  return booking;
}

}  // namespace cmlbed::net
