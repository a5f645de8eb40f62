#pragma once
// How one message takes its place on a link: its header, then its payload in chunks of
// at most `chunk_bytes`, all offered at once. The transport's outbox sends each piece at
// its booked time and the schedule simulator predicts arrivals from the same bookings,
// so the two cannot drift apart.
#include <cstdint>
#include <functional>

#include "cmlbed/net/link.hpp"

namespace cmlbed::net {

struct MessageBooking {
  std::int64_t header_ns = 0;         // the header's booked time
  std::int64_t first_payload_ns = 0;  // the first payload chunk's (the header's if none)
  std::int64_t last_ns = 0;           // the last piece's
  std::int64_t payload_chunks = 0;
  // The rhythm of the payload chunks on a shaped link (0 with fewer than two chunks):
  // the header carries it, so the receiver knows when to look for the last ones.
  std::int64_t chunk_interval_ns = 0;
};

// Books a message of `payload_bytes` on `link` at `now_ns`; a null link (unshaped) books
// every piece at `now_ns`. `on_chunk(offset, bytes, booked_ns)` is told each payload
// chunk in order. `booked_ns` is a Link::Slot's arrival_ns.
MessageBooking book_message(Link* link, std::uint64_t payload_bytes, std::uint64_t chunk_bytes, std::int64_t now_ns,
                            const std::function<void(std::uint64_t offset, std::uint64_t bytes,
                                                     std::int64_t booked_ns)>& on_chunk = {});

}  // namespace cmlbed::net
