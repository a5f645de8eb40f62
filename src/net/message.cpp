#include "cmlbed/net/message.hpp"

#include <stdexcept>

namespace cmlbed::net {

const char* to_string(MessageKind kind) {
  switch (kind) {
    case MessageKind::activation: return "activation";
    case MessageKind::gradient: return "gradient";
    case MessageKind::model: return "model";
    case MessageKind::transfer_up: return "transfer_up";
    case MessageKind::transfer_down: return "transfer_down";
    case MessageKind::control: return "control";
  }
  return "unknown";
}

trace::MessageType message_type(MessageKind kind) {
  static_assert(kMessageKinds + 1 == static_cast<int>(trace::MessageType::control) + 1,
                "trace::MessageType is net::MessageKind plus one (0 = none)");
  return static_cast<trace::MessageType>(static_cast<int>(kind) + 1);
}

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::uint8: return 1;
    case DType::int64: return 8;
    case DType::float32: return 4;
    case DType::float64: return 8;
  }
  throw std::invalid_argument("unknown dtype");
}

std::string MessageHeader::describe() const {
  return std::string(to_string(kind)) + " #" + std::to_string(sequence) + " (round " +
         std::to_string(round) + ", batch " + std::to_string(batch) + ", micro-batch " +
         std::to_string(micro_batch) + ", " + std::to_string(bytes) + " bytes)";
}

}  // namespace cmlbed::net
