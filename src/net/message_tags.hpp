#pragma once
// MPI tags of a message kind's headers and payload chunks (each kind its own pair, so
// MPI keeps each kind's messages in order). Private to src/net.
#include "cmlbed/net/message.hpp"

namespace cmlbed::net::detail {

inline int header_tag(MessageKind kind) { return 2 * static_cast<int>(kind); }
inline int payload_tag(MessageKind kind) { return 2 * static_cast<int>(kind) + 1; }

}  // namespace cmlbed::net::detail
