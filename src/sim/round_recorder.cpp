#include "round_recorder.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "cmlbed/net/chunk_pacing.hpp"
#include "cmlbed/net/message_booking.hpp"
#include "cmlbed/net/message.hpp"
#include "cmlbed/net/wake_policy.hpp"

namespace cmlbed::sim {
namespace {

// What one message does on a link, booked as the transport's outbox books it
// (net::book_message).
struct Booking {
  std::int64_t first_arrival_ns;
  std::int64_t arrival_ns;
  // How late, on average, the receiver's communication thread sees the last chunk: a
  // shaped message of two payload chunks or more carries their rhythm, at which the receiver
  // looks for its last chunks (chunk_look_interval_ns), so the last one waits half a
  // look interval on average (the outbox's and inbox's rule, net/outbox.cpp, inbox.cpp).
  std::int64_t look_lateness_ns = 0;
};

Booking book(net::Link& link, std::int64_t bytes, std::int64_t now_ns) {
  const net::MessageBooking booked =
      net::book_message(&link, static_cast<std::uint64_t>(bytes), link.max_chunk_bytes(), now_ns);
  Booking booking{booked.header_ns, booked.last_ns};
  if (link.shaped() && booked.payload_chunks > 1) {
    booking.look_lateness_ns =
        net::chunk_look_interval_ns(booked.chunk_interval_ns, 0, 0, net::kMaxPollIntervalNs) / 2;
  }
  return booking;
}

}  // namespace

std::int64_t seconds_to_ns(double seconds) { return static_cast<std::int64_t>(std::llround(seconds * 1e9)); }

double at(const std::vector<double>& values, std::int64_t n) {
  if (n < 0 || static_cast<std::size_t>(n) >= values.size()) {
    throw std::invalid_argument("simulate: no stage length for " + std::to_string(n) + " samples");
  }
  return values[static_cast<std::size_t>(n)];
}

namespace {

// `paced_work`: a paced part's host time for the stage (a timed part's work is its
// seconds / stretch).
StageTime part_stage(const SimulatedPart& part, double seconds, double flops, double paced_work) {
  StageTime stage;
  stage.seconds = seconds;
  stage.flops = flops;
  stage.work_s = part.paced ? paced_work : seconds / part.stretch;
  stage.stretch = part.stretch;
  stage.paced = part.paced;
  stage.threads = part.threads;
  stage.wake_s = part.wake_s;
  return stage;
}

// A paced part's work at n samples: `work`'s value, or the stage's seconds without one.
double paced_work(const std::vector<double>& work, std::int64_t n, double seconds) {
  return work.empty() ? seconds : at(work, n);
}

}  // namespace

StageTime forward_stage(const SimulatedPart& part, std::int64_t n) {
  const double seconds = at(part.forward_s, n);
  return part_stage(part, seconds, at(part.forward_flops, n), paced_work(part.forward_work_s, n, seconds));
}

StageTime backward_stage(const SimulatedPart& part, std::int64_t n) {
  const double seconds = at(part.backward_s, n);
  return part_stage(part, seconds, at(part.backward_flops, n), paced_work(part.backward_work_s, n, seconds));
}

StageTime step_stage(const SimulatedPart& part) {
  return part_stage(part, part.step_s, part.step_flops, part.step_work_s);
}

StageTime work_stage(double seconds, double flops, int threads) {
  StageTime stage;
  stage.seconds = stage.work_s = seconds;
  stage.flops = flops;
  stage.threads = threads;
  return stage;
}

RoundRecorder::RoundRecorder(std::vector<net::Link>& uplinks, std::vector<net::Link>& downlinks, int devices,
                             int round, std::int64_t start_ns, HostCores* host_cores, bool transfer_events)
    : uplinks_(uplinks), downlinks_(downlinks), host_cores_(host_cores), transfer_events_(transfer_events) {
  result_.round = round;
  result_.start_ns = start_ns;
  result_.events.resize(static_cast<std::size_t>(devices + 1));
  result_.flops.assign(static_cast<std::size_t>(devices + 1), 0.0);
  result_.held_ns.assign(static_cast<std::size_t>(devices + 1), 0);
  result_.overrun_ns.assign(static_cast<std::size_t>(devices + 1), 0);
  last_end_.assign(static_cast<std::size_t>(devices + 1), -1);
  slept_.assign(static_cast<std::size_t>(devices + 1), 1);
  time_shared_ = host_cores != nullptr && 2 * (devices + 1) > host_cores->cores();
}

std::int64_t RoundRecorder::compute(int rank, trace::EventKind kind, std::int64_t start, const StageTime& given,
                                    int batch, int micro) {
  const auto r = static_cast<std::size_t>(rank);
  StageTime stage = given;
  if (time_shared_ || slept_[r] != 0 || start > last_end_[r]) {
    stage.work_s += stage.wake_s;
    if (!stage.paced) stage.seconds += stage.wake_s * stage.stretch;
  }
  std::int64_t length = seconds_to_ns(stage.seconds);
  std::int64_t work = length;  // the work's wall time
  double cpu_s = stage.work_s;  // the CPU time its thread is charged for it
  if (host_cores_ != nullptr) {
    // The work's wall time under the host's load (switched out every slice where it is
    // oversubscribed, each time coming back to cold caches: wake_s), and the stage the runtime makes of it
    // (Timeline::Scope: paced to at least its length, or stretched by slowdown: k times
    // the work's own CPU time on one thread, switch work included, at least its wall
    // time; k times the wall time on several).
    const HostCores::SharedRun shared = host_cores_->run(start, stage.work_s, stage.wake_s);
    work = shared.wall_ns;
    cpu_s = shared.cpu_s;
    host_cores_->book(start, start + work, stage.threads);
    if (stage.paced) {
      length = std::max(length, work);
    } else if (stage.threads == 1) {
      length = std::max(work, seconds_to_ns(cpu_s * stage.stretch));
    } else {
      length = static_cast<std::int64_t>(std::llround(static_cast<double>(work) * stage.stretch));
    }
  } else if (stage.paced || stage.stretch > 1) {
    work = seconds_to_ns(stage.work_s);
  }
  // What the runtime's Timeline::Scope holds the stage to, and how far the work outlasts it.
  const bool held = stage.paced || (stage.stretch > 1 && stage.threads == 1);
  trace::Event e;
  if (held) {
    const std::int64_t target = stage.paced ? seconds_to_ns(stage.seconds) : seconds_to_ns(cpu_s * stage.stretch);
    result_.held_ns[r] += target;
    result_.overrun_ns[r] += std::max<std::int64_t>(0, work - target);
    e.held = work > target ? trace::Held::overran : trace::Held::kept;
  }
  e.round = result_.round;
  e.batch = batch;
  e.micro_batch = micro;
  e.lane = trace::Lane::compute;
  e.kind = kind;
  e.t_start_ns = start;
  e.t_end_ns = start + length;
  result_.events[static_cast<std::size_t>(rank)].push_back(e);
  result_.flops[static_cast<std::size_t>(rank)] += stage.flops;
  last_end_[r] = e.t_end_ns;
  slept_[r] = length > work ? 1 : 0;
  return e.t_end_ns;
}

std::int64_t RoundRecorder::transfer(int from, int to, trace::MessageType type, std::int64_t bytes,
                                     std::int64_t now_ns, int batch, int micro) {
  const bool up = from != 0;
  const int d = up ? from : to;
  const Booking booking = book((up ? uplinks_ : downlinks_)[static_cast<std::size_t>(d - 1)], bytes, now_ns);
  (up ? result_.bytes_up : result_.bytes_down) += bytes;
  // The receiver sees it late by its look, and by the wake-ups' waits for a core when
  // all are busy then (HostCores::wake_latency_ns).
  std::int64_t seen = booking.arrival_ns + booking.look_lateness_ns;
  if (host_cores_ != nullptr) seen += host_cores_->wake_latency_ns(seen);
  if (!transfer_events_) return seen;
  trace::Event e;
  e.round = result_.round;
  e.batch = batch;
  e.micro_batch = micro;
  e.lane = up ? trace::Lane::uplink : trace::Lane::downlink;
  e.message = type;
  e.bytes = bytes;
  e.kind = trace::EventKind::send;
  e.peer = to;
  e.t_start_ns = now_ns;
  e.t_end_ns = booking.arrival_ns;
  result_.events[static_cast<std::size_t>(from)].push_back(e);
  e.kind = trace::EventKind::recv;
  e.peer = from;
  e.t_start_ns = booking.first_arrival_ns;
  e.t_end_ns = seen;
  result_.events[static_cast<std::size_t>(to)].push_back(e);
  return seen;
}

SimulatedRound RoundRecorder::finish(std::int64_t end_ns) {
  result_.end_ns = end_ns;
  return std::move(result_);
}

std::int64_t train_batch(RoundRecorder& record, const SimulatedPart& part, int rank, int b, std::int64_t n,
                         std::int64_t start) {
  std::int64_t t = record.compute(rank, trace::EventKind::forward, start, forward_stage(part, n), b, 0);
  t = record.compute(rank, trace::EventKind::backward, t, backward_stage(part, n), b, 0);
  return record.compute(rank, trace::EventKind::step, t, step_stage(part), b);
}

}  // namespace cmlbed::sim
