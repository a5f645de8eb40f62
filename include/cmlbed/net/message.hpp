#pragma once
// What travels between ranks: a fixed-size header, then the payload in chunks.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cmlbed/net/payload.hpp"
#include "cmlbed/trace/event.hpp"

namespace cmlbed::net {

// What a message carries; each kind is its own ordered channel between two ranks.
enum class MessageKind : std::uint8_t {
  activation = 0,  // device -> server, with labels
  gradient = 1,    // server -> device
  model = 2,       // model parameters, either direction
  transfer_up = 3,    // the transfer smoke job
  transfer_down = 4,
  control = 5,
};
constexpr int kMessageKinds = 6;
const char* to_string(MessageKind kind);
// How the timeline names a message kind (trace sits below net, so it has its own enum).
trace::MessageType message_type(MessageKind kind);

enum class DType : std::uint8_t { uint8 = 0, int64 = 1, float32 = 2, float64 = 3 };
std::size_t dtype_size(DType dtype);

struct MessageHeader {
  static constexpr int kMaxDims = 6;
  MessageKind kind = MessageKind::control;
  DType dtype = DType::uint8;
  std::uint8_t dims = 0;
  std::int32_t round = -1;
  std::int32_t batch = -1;
  std::int32_t micro_batch = -1;
  std::int32_t micro_batches = 0;  // micro-batches in this mini-batch (pipelined methods)
  std::int64_t samples = 0;        // samples behind a model update, for weighted averaging
  std::array<std::int64_t, kMaxDims> shape{};
  std::int64_t bytes = 0;        // payload size
  std::int64_t chunk_bytes = 0;  // payload travels in chunks of this size (last may be short)
  std::uint64_t sequence = 0;    // per (sender, receiver, kind), checked by the receiver
  // Shaped links: time between the payload chunks' deadlines (0 = unshaped), so that the
  // receiver polls in step with the link instead of as fast as for unshaped bytes.
  std::int64_t chunk_interval_ns = 0;

  std::string describe() const;  // for error messages: kind, round, batch, micro-batch
};

struct Message {
  MessageHeader header;
  Payload payload;
};

}  // namespace cmlbed::net
