#include "cmlbed/train/method.hpp"

#include <optional>
#include <stdexcept>
#include <thread>


namespace cmlbed::train {
namespace {

// A wait of this rank for a message of `kind` from or to `peer`, on the compute lane.
trace::Event wait_event(const RoundContext& context, int peer, net::MessageKind kind) {
  trace::Event event = trace::compute_event(trace::EventKind::wait, context.round);
  event.peer = peer;
  event.message = net::message_type(kind);
  return event;
}

}  // namespace

trace::Timeline::Scope compute_stage(const RoundContext& context, trace::EventKind kind, int batch,
                                     int micro_batch, double flops) {
  context.flops += flops;
  return trace::Timeline::Scope(context.timeline, trace::compute_event(kind, context.round, batch, micro_batch),
                                context.slowdown);
}

std::runtime_error timeout_error(const RoundContext& context, int peer, const char* stage) {
  return std::runtime_error("rank " + std::to_string(context.rank) + ": round " + std::to_string(context.round) +
         ": no progress on '" + stage + "' with rank " + std::to_string(peer) + " within " +
         std::to_string(std::chrono::duration<double>(context.timeout).count()) +
         " s (experiment.timeout); is that rank alive?");
}

void serve_in_arrival_order(const RoundContext& context, net::MessageKind kind,
                            const std::map<int, std::int64_t>& expected, const char* stage,
                            const std::function<void(int device, const net::Message&)>& serve) {
  std::map<int, std::int64_t> left = expected;
  std::map<int, net::RecvHandle> posted;
  for (const auto& [device, count] : left) {
    if (count > 0) posted[device] = context.transport.post_recv(device, kind);
  }
  auto deadline = std::chrono::steady_clock::now() + context.timeout;
  while (!posted.empty()) {
    bool served = false;
    for (auto it = posted.begin(); it != posted.end();) {
      const int device = it->first;
      if (!it->second.ready()) {
        ++it;
        continue;
      }
      const net::Message message = it->second.wait();
      if (--left[device] > 0) {
        it->second = context.transport.post_recv(device, kind);
        ++it;
      } else {
        it = posted.erase(it);
      }
      serve(device, message);
      served = true;
    }
    if (served) {
      deadline = std::chrono::steady_clock::now() + context.timeout;
    } else if (std::chrono::steady_clock::now() > deadline) {
      throw timeout_error(context, posted.begin()->first, stage);
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

net::Message receive_or_throw(net::RecvHandle& handle, const RoundContext& context, int peer,
                              const char* stage) {
  std::optional<net::Message> message;
  if (handle.ready()) {
    message = handle.wait_for(context.timeout);
  } else {
    trace::Timeline::Scope waiting(context.timeline, wait_event(context, peer, handle.kind()));
    message = handle.wait_for(context.timeout);
  }
  if (!message) throw timeout_error(context, peer, stage);
  return std::move(*message);
}

void wait_or_throw(const net::SendHandle& handle, const RoundContext& context, int peer,
                   const char* stage) {
  if (handle.done()) return;
  trace::Timeline::Scope waiting(context.timeline, wait_event(context, peer, handle.kind()));
  if (!handle.wait_for(context.timeout)) throw timeout_error(context, peer, stage);
}

}  // namespace cmlbed::train
