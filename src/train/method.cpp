#include "cmlbed/train/method.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <vector>

#include "cmlbed/base/interrupt.hpp"

namespace cmlbed::train {
namespace {

// A wait of this rank for a message of `kind` from or to `peer`, on the compute lane.
trace::Event wait_event(const RoundContext& context, int peer, net::MessageKind kind) {
  trace::Event event = trace::compute_event(trace::EventKind::wait, context.round);
  event.peer = peer;
  event.message = net::message_type(kind);
  return event;
}

// Calls `attempt(slice)`, a wait of at most `slice` that says whether it got what it
// waited for, until it does (true) or `deadline` passes (false). Between slices it looks
// for a stop request (SIGTERM, SIGINT) and throws Interrupted: a rank blocked on a
// peer that has stopped must not wait out the whole timeout.
template <typename Attempt>
bool wait_interruptibly(std::chrono::steady_clock::time_point deadline, Attempt attempt) {
  while (true) {
    const auto left = deadline - std::chrono::steady_clock::now();
    const auto slice = std::max<std::chrono::steady_clock::duration>(
        std::chrono::steady_clock::duration::zero(), std::min<std::chrono::steady_clock::duration>(kInterruptCheck, left));
    if (attempt(slice)) return true;
    throw_if_interrupted();
    if (std::chrono::steady_clock::now() >= deadline) return false;
  }
}

std::chrono::steady_clock::time_point timeout_from_now(const RoundContext& context) {
  return std::chrono::steady_clock::now() + context.timeout;
}

}  // namespace

void Method::save_state(torch::serialize::OutputArchive& /*archive*/) {
  throw std::logic_error("this method does not support checkpoints (its method table row is not checkpointable)");
}

void Method::load_state(torch::serialize::InputArchive& /*archive*/) {
  throw std::logic_error("this method does not support checkpoints (its method table row is not checkpointable)");
}

void Method::apply_plan(const RoundContext& /*context*/, const std::vector<DeviceChoice>& /*plan*/) {
  throw std::logic_error("this method has no split point or micro-batches to re-plan");
}

trace::Timeline::Scope compute_stage(const RoundContext& context, trace::EventKind kind, int batch,
                                     int micro_batch, double flops) {
  throw_if_interrupted();  // a safe point: nothing of the stage has run yet
  context.flops += flops;
  const trace::Event event = trace::compute_event(kind, context.round, batch, micro_batch);
  if (context.flops_per_second > 0 && flops > 0) {
    return trace::Timeline::Scope(context.timeline, event,
                                  std::chrono::nanoseconds(std::llround(flops / context.flops_per_second * 1e9)));
  }
  return trace::Timeline::Scope(context.timeline, event, context.slowdown);
}

RoundContext with_flops_counter(const RoundContext& context, double& flops) {
  return RoundContext{context.round,    context.rank,    context.devices,          context.slowdown,
                      context.transport, context.timeline, context.timeout, context.evaluation_scope,
                      flops,            context.flops_per_second};
}

std::runtime_error timeout_error(const RoundContext& context, int peer, const char* stage) {
  return std::runtime_error("rank " + std::to_string(context.rank) + ": round " + std::to_string(context.round) +
         ": no progress on '" + stage + "' with rank " + std::to_string(peer) + " within " +
         std::to_string(std::chrono::duration<double>(context.timeout).count()) +
         " s (experiment.timeout); is that rank alive?");
}

void serve_in_arrival_order(const RoundContext& context, net::MessageKind kind,
                            const std::map<int, std::int64_t>& expected, const char* stage,
                            const std::function<void(int device, net::Message& message)>& serve,
                            const std::function<void()>& between_waits) {
  // One posted receive per device still owed messages, in device order (so a timeout
  // names the lowest device still pending). The main thread sleeps in wait_any until a
  // receive completes (or a slice ends, to look for a stop) rather than polling: a wait
  // may last seconds, and each look would wake the thread and take a core from the
  // ranks that compute (docs/explanation/architecture.md, "What waiting costs").
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
    std::optional<std::size_t> ready;
    if (!wait_interruptibly(timeout_from_now(context), [&](auto slice) {
          if (between_waits) between_waits();
          ready = net::wait_any(waiting, std::chrono::steady_clock::now() + slice);
          return ready.has_value();
        })) {
      throw timeout_error(context, devices.front(), stage);
    }
    const std::size_t i = *ready;
    const int device = devices[i];
    if (blocked) {
      trace::Event waited = wait_event(context, device, kind);
      waited.t_start_ns = wait_start;
      waited.t_end_ns = context.timeline.now_ns();
      context.timeline.record(waited);
    }
    net::Message message = posted[i].wait();
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
  const auto receive = [&](auto slice) {
    message = handle.wait_for(slice);
    return message.has_value();
  };
  if (handle.ready()) {
    receive(std::chrono::nanoseconds::zero());
  } else {
    trace::Timeline::Scope waiting(context.timeline, wait_event(context, peer, handle.kind()));
    wait_interruptibly(timeout_from_now(context), receive);
  }
  if (!message) throw timeout_error(context, peer, stage);
  return std::move(*message);
}

void wait_or_throw(const net::SendHandle& handle, const RoundContext& context, int peer,
                   const char* stage) {
  if (handle.done()) return;
  trace::Timeline::Scope waiting(context.timeline, wait_event(context, peer, handle.kind()));
  if (!wait_interruptibly(timeout_from_now(context), [&](auto slice) { return handle.wait_for(slice); })) {
    throw timeout_error(context, peer, stage);
  }
}

}  // namespace cmlbed::train
