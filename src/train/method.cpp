#include "cmlbed/train/method.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>


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
  // One posted receive per device still owed messages, in device order (so a timeout
  // names the lowest device still pending). The main thread sleeps in wait_any until a
  // receive completes: measured with `cmlbed-bench-runtime --only server-wait` (8 MiB
  // at 10 mbit, 6.7 s), polling every 50 us woke the server's main thread 8,700 times a
  // second and cost 10.9% of a core; the blocking wait 0.003% and no wake-up.
  std::vector<int> devices;
  std::vector<std::int64_t> left;
  std::vector<net::RecvHandle> posted;
  for (const auto& [device, count] : expected) {
    if (count <= 0) continue;
    devices.push_back(device);
    left.push_back(count);
    posted.push_back(context.transport.post_recv(device, kind));
  }
  std::vector<const net::RecvHandle*> waiting;
  while (!posted.empty()) {
    waiting.clear();
    for (const auto& handle : posted) waiting.push_back(&handle);
    // Nothing ready: the server is idle, and the wait goes on the timeline, charged to
    // the device whose message ends it.
    const bool blocked = std::none_of(posted.begin(), posted.end(),
                                      [](const net::RecvHandle& handle) { return handle.ready(); });
    const std::int64_t wait_start = context.timeline.now_ns();
    // Of several complete receives, wait_any gives the earliest: arrival order.
    const auto ready = net::wait_any(waiting, std::chrono::steady_clock::now() + context.timeout);
    if (!ready) throw timeout_error(context, devices.front(), stage);
    const std::size_t i = *ready;
    const int device = devices[i];
    if (blocked) {
      trace::Event waited = wait_event(context, device, kind);
      waited.t_start_ns = wait_start;
      waited.t_end_ns = context.timeline.now_ns();
      context.timeline.record(waited);
    }
    const net::Message message = posted[i].wait();
    if (--left[i] > 0) {
      posted[i] = context.transport.post_recv(device, kind);
    } else {
      devices.erase(devices.begin() + static_cast<std::ptrdiff_t>(i));
      left.erase(left.begin() + static_cast<std::ptrdiff_t>(i));
      posted.erase(posted.begin() + static_cast<std::ptrdiff_t>(i));
    }
    serve(device, message);
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
