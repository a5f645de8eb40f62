#include "transfer_method.hpp"

#include <chrono>
#include <map>

#include "cmlbed/base/thread_cpu.hpp"

namespace cmlbed::train {
namespace {

net::MessageHeader transfer_header(net::MessageKind kind, int round, std::size_t bytes) {
  net::MessageHeader header;
  header.kind = kind;
  header.round = round;
  header.batch = 0;
  header.dtype = net::DType::uint8;
  header.dims = 1;
  header.shape[0] = static_cast<std::int64_t>(bytes);
  return header;
}

// Real work for the compute stage (not a sleep), so a transfer competes with computation
// for the core as it would with training: `duration` of this thread's CPU time, which is
// what a slowdown stretches (Timeline::Scope).
void busy_compute(std::chrono::nanoseconds duration) {
  const auto end = thread_cpu_time() + duration;
  volatile double sink = 0;
  while (thread_cpu_time() < end) {
    for (int i = 0; i < 256; ++i) sink = sink + i * 1e-3;
  }
}

}  // namespace

TransferMethod::TransferMethod(const Settings& settings, int, int, MPI_Comm)
    : bytes_(static_cast<std::size_t>(settings.transfer.bytes)),
      compute_(settings.transfer.compute.count()) {}

void TransferMethod::run_round(const RoundContext& context) {
  if (context.rank == 0) {
    serve(context);
  } else {
    take_part(context);
  }
}

void TransferMethod::serve(const RoundContext& context) {
  // Answer each device as soon as its upload is complete, in arrival order.
  std::map<int, std::int64_t> one_each;
  for (int device = 1; device <= context.devices; ++device) one_each[device] = 1;
  std::map<int, net::SendHandle> replies;
  serve_in_arrival_order(context, net::MessageKind::transfer_up, one_each, "transfer upload",
                         [&](int device, const net::Message& upload) {
                           replies[device] = context.transport.send(
                               device,
                               transfer_header(net::MessageKind::transfer_down, context.round,
                                               upload.payload.size()),
                               net::Payload(upload.payload.size(), std::byte{0x5a}));
                         });
  for (const auto& [device, reply] : replies) wait_or_throw(reply, context, device, "transfer reply");
}

void TransferMethod::take_part(const RoundContext& context) {
  net::RecvHandle reply = context.transport.post_recv(0, net::MessageKind::transfer_down);
  if (compute_.count() > 0) {
    auto stage = compute_stage(context, trace::EventKind::compute, 0);
    busy_compute(compute_);
  }
  const net::SendHandle upload = context.transport.send(
      0, transfer_header(net::MessageKind::transfer_up, context.round, bytes_),
      net::Payload(bytes_, std::byte{0xa5}));
  wait_or_throw(upload, context, 0, "transfer upload");
  const net::Message message = receive_or_throw(reply, context, 0, "transfer reply");
  if (message.payload.size() != bytes_) {
    throw std::runtime_error("transfer: the reply has " + std::to_string(message.payload.size()) +
                             " bytes, expected " + std::to_string(bytes_));
  }
}

}  // namespace cmlbed::train
