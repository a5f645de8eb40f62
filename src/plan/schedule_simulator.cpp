#include "cmlbed/plan/schedule_simulator.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <queue>
#include <stdexcept>

#include "cmlbed/net/message.hpp"

namespace cmlbed::plan {
namespace {

using trace::Event;
using trace::EventKind;
using trace::Lane;
using trace::MessageType;

std::int64_t ns(double seconds) { return static_cast<std::int64_t>(std::llround(seconds * 1e9)); }

double at(const SecondsBySamples& seconds, std::int64_t n) {
  if (n < 0 || static_cast<std::size_t>(n) >= seconds.size()) {
    throw std::invalid_argument("simulate: no stage length for " + std::to_string(n) + " samples");
  }
  return seconds[static_cast<std::size_t>(n)];
}

// What one message does on a link, booked as the transport's outbox books it: its
// header, then its payload in chunks of the link's largest chunk, all offered at once.
struct Booking {
  std::int64_t first_arrival_ns;
  std::int64_t arrival_ns;
};

Booking book(net::Link& link, std::int64_t bytes, std::int64_t now_ns) {
  net::Link::Slot slot = link.schedule(sizeof(net::MessageHeader), now_ns);
  const std::int64_t first = slot.arrival_ns;
  const auto chunk = static_cast<std::int64_t>(link.max_chunk_bytes());
  for (std::int64_t offset = 0; offset < bytes; offset += chunk) {
    slot = link.schedule(static_cast<std::uint64_t>(std::min(chunk, bytes - offset)), now_ns);
  }
  return {first, slot.arrival_ns};
}

class RoundSimulation {
 public:
  RoundSimulation(const SimulationInput& input, std::vector<net::Link>& uplinks, std::vector<net::Link>& downlinks,
                  int round, std::int64_t start_ns)
      : in_(input), uplinks_(uplinks), downlinks_(downlinks), devices_(static_cast<int>(input.devices.size())) {
    result_.round = round;
    result_.start_ns = start_ns;
    result_.events.resize(static_cast<std::size_t>(devices_ + 1));
    result_.flops.assign(static_cast<std::size_t>(devices_ + 1), 0.0);
    aggregates_ = (round + 1) % input.aggregate_every == 0 || round + 1 == input.rounds;
    state_.resize(static_cast<std::size_t>(devices_));
  }

  SimulatedRound run() {
    if (in_.method == "sl") {
      push(result_.start_ns, What::server_handover, 1);  // the devices take turns
    } else {
      for (int d = 1; d <= devices_; ++d) {
        if (in_.method == "fl") {
          train_locally(d, result_.start_ns);
        } else {
          push(result_.start_ns, What::device_start_batch, d);
        }
      }
    }
    while (!events_.empty()) {
      const Pending next = events_.top();
      events_.pop();
      handle(next);
    }
    result_.end_ns = result_.start_ns;
    for (const DeviceState& device : state_) result_.end_ns = std::max(result_.end_ns, device.done_ns);
    result_.end_ns = std::max(result_.end_ns, server_free_ns_);
    return std::move(result_);
  }

 private:
  enum class What {
    device_start_batch, server_activation, server_free, device_gradient, server_model, device_model,
    server_handover,  // sl: the server sends the device part to the next device
    server_return     // sl: the device part is back on the server
  };
  struct Pending {
    std::int64_t t;
    std::uint64_t seq;
    What what;
    int device;
    int batch;
    int micro;
    bool operator>(const Pending& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  struct DeviceState {
    int batch = 0;
    std::vector<std::int64_t> sizes;                   // this mini-batch's micro-batches
    std::vector<std::optional<std::int64_t>> gradients;  // arrival of each
    int next_backward = 0;
    std::int64_t free_ns = 0;
    std::int64_t done_ns = 0;
  };

  const SimulatedDevice& device(int d) const { return in_.devices[static_cast<std::size_t>(d - 1)]; }
  DeviceState& state(int d) { return state_[static_cast<std::size_t>(d - 1)]; }

  void push(std::int64_t t, What what, int d, int batch = -1, int micro = -1) {
    events_.push({t, seq_++, what, d, batch, micro});
  }

  std::int64_t compute(int rank, EventKind kind, std::int64_t start, double seconds, double flops, int batch = -1,
                       int micro = -1) {
    Event e;
    e.round = result_.round;
    e.batch = batch;
    e.micro_batch = micro;
    e.lane = Lane::compute;
    e.kind = kind;
    e.t_start_ns = start;
    e.t_end_ns = start + ns(seconds);
    result_.events[static_cast<std::size_t>(rank)].push_back(e);
    result_.flops[static_cast<std::size_t>(rank)] += flops;
    return e.t_end_ns;
  }

  // A message from `from` to `to` offered at now_ns: the sender's send and the receiver's
  // recv event, on the device's uplink or downlink; returns its arrival.
  std::int64_t transfer(int from, int to, MessageType type, std::int64_t bytes, std::int64_t now_ns, int batch = -1,
                        int micro = -1) {
    const bool up = from != 0;
    const int d = up ? from : to;
    const Booking booking = book((up ? uplinks_ : downlinks_)[static_cast<std::size_t>(d - 1)], bytes, now_ns);
    Event e;
    e.round = result_.round;
    e.batch = batch;
    e.micro_batch = micro;
    e.lane = up ? Lane::uplink : Lane::downlink;
    e.message = type;
    e.bytes = bytes;
    e.kind = EventKind::send;
    e.peer = to;
    e.t_start_ns = now_ns;
    e.t_end_ns = booking.arrival_ns;
    result_.events[static_cast<std::size_t>(from)].push_back(e);
    e.kind = EventKind::recv;
    e.peer = from;
    e.t_start_ns = booking.first_arrival_ns;
    result_.events[static_cast<std::size_t>(to)].push_back(e);
    return booking.arrival_ns;
  }

  // fl: every mini-batch on the device, whole model, then the model to the server.
  void train_locally(int d, std::int64_t t) {
    const SimulatedDevice& dev = device(d);
    const std::int64_t n = in_.batch_size;
    const double samples = static_cast<double>(n);
    for (int b = 0; b < dev.batches; ++b) {
      t = compute(d, EventKind::forward, t, at(dev.part.forward_s, n), samples * dev.part.forward_flops_per_sample, b);
      t = compute(d, EventKind::backward, t, at(dev.part.backward_s, n), samples * dev.part.backward_flops_per_sample, b);
      t = compute(d, EventKind::step, t, dev.part.step_s, dev.part.step_flops, b);
    }
    finish_training(d, t);
  }

  void finish_training(int d, std::int64_t t) {
    state(d).free_ns = t;
    if (in_.method == "sl") {  // the device part back to the server, for the next device
      const std::int64_t arrival = transfer(d, 0, MessageType::model, device(d).part_parameters * 4, t);
      state(d).done_ns = arrival;
      push(arrival, What::server_return, d);
      return;
    }
    if (!aggregates_) {
      state(d).done_ns = t;
      return;
    }
    const std::int64_t bytes = device(d).part_parameters * 4;
    push(transfer(d, 0, MessageType::model, bytes, t), What::server_model, d);
  }

  void handle(const Pending& p) {
    switch (p.what) {
      case What::device_start_batch: return start_batch(p.device, p.t);
      case What::server_activation:
        arrived_.push({p.t, p.seq, p.what, p.device, p.batch, p.micro});
        return serve(p.t);
      case What::server_free: return serve(p.t);
      case What::device_gradient: return take_gradient(p);
      case What::server_model:
        ++models_;
        return aggregate_when_ready(p.t);
      case What::device_model: state(p.device).done_ns = p.t; return;
      case What::server_handover: return hand_over(p.device, p.t);
      case What::server_return:
        server_free_ns_ = std::max(server_free_ns_, p.t);
        if (p.device < devices_) push(p.t, What::server_handover, p.device + 1);
        return;
    }
  }

  // sl: once the server has served the previous device and has its part back, the part
  // goes to device d, which trains when it arrives.
  void hand_over(int d, std::int64_t now) {
    const std::int64_t start = std::max(now, server_free_ns_);
    push(transfer(0, d, MessageType::model, device(d).part_parameters * 4, start), What::device_start_batch, d);
  }

  // The m forwards back to back, each activation leaving as soon as it exists.
  void start_batch(int d, std::int64_t t) {
    const SimulatedDevice& dev = device(d);
    DeviceState& s = state(d);
    s.sizes = micro_batch_sizes(in_.batch_size, dev.micro_batches);
    s.gradients.assign(s.sizes.size(), std::nullopt);
    s.next_backward = 0;
    for (std::size_t i = 0; i < s.sizes.size(); ++i) {
      const std::int64_t n = s.sizes[i];
      t = compute(d, EventKind::forward, t, at(dev.part.forward_s, n),
                  static_cast<double>(n) * dev.part.forward_flops_per_sample, s.batch, static_cast<int>(i));
      const std::int64_t bytes = n * (dev.activation_bytes_per_sample + 8);  // activation + int64 labels
      push(transfer(d, 0, MessageType::activation, bytes, t, s.batch, static_cast<int>(i)), What::server_activation,
           d, s.batch, static_cast<int>(i));
    }
    s.free_ns = t;
  }

  // One compute stream serving micro-batches in arrival order.
  void serve(std::int64_t now) {
    if (server_free_ns_ > now || arrived_.empty()) return;
    const Pending job = arrived_.top();
    arrived_.pop();
    const SimulatedDevice& dev = device(job.device);
    const std::int64_t n = micro_batch_sizes(in_.batch_size, dev.micro_batches)[static_cast<std::size_t>(job.micro)];
    const double samples = static_cast<double>(n);
    std::int64_t t = compute(0, EventKind::forward, now, at(dev.server.forward_s, n),
                             samples * dev.server.forward_flops_per_sample, job.batch, job.micro);
    t = compute(0, EventKind::backward, t, at(dev.server.backward_s, n), samples * dev.server.backward_flops_per_sample,
                job.batch, job.micro);
    push(transfer(0, job.device, MessageType::gradient, n * dev.activation_bytes_per_sample, t, job.batch, job.micro),
         What::device_gradient, job.device, job.batch, job.micro);
    if (job.micro + 1 == dev.micro_batches) t = compute(0, EventKind::step, t, dev.server.step_s, dev.server.step_flops, job.batch);
    server_free_ns_ = t;
    push(t, What::server_free, 0);
  }

  // Backwards in order as their gradients arrive, then one step for the mini-batch.
  void take_gradient(const Pending& p) {
    const SimulatedDevice& dev = device(p.device);
    DeviceState& s = state(p.device);
    s.gradients[static_cast<std::size_t>(p.micro)] = p.t;
    while (s.next_backward < static_cast<int>(s.sizes.size()) &&
           s.gradients[static_cast<std::size_t>(s.next_backward)]) {
      const std::int64_t n = s.sizes[static_cast<std::size_t>(s.next_backward)];
      const std::int64_t start = std::max(s.free_ns, *s.gradients[static_cast<std::size_t>(s.next_backward)]);
      s.free_ns = compute(p.device, EventKind::backward, start, at(dev.part.backward_s, n),
                          static_cast<double>(n) * dev.part.backward_flops_per_sample, s.batch, s.next_backward);
      ++s.next_backward;
    }
    if (s.next_backward < static_cast<int>(s.sizes.size())) return;
    s.free_ns = compute(p.device, EventKind::step, s.free_ns, dev.part.step_s, dev.part.step_flops, s.batch);
    if (++s.batch < dev.batches) {
      push(s.free_ns, What::device_start_batch, p.device);
    } else {
      finish_training(p.device, s.free_ns);
    }
  }

  // FedAvg once every device's model is in and the server has served everything.
  void aggregate_when_ready(std::int64_t now) {
    if (models_ < devices_) return;
    const std::int64_t start = std::max(now, server_free_ns_);
    const double seconds = in_.aggregate_s_per_parameter * static_cast<double>(in_.model_parameters) * devices_;
    const std::int64_t end = compute(0, EventKind::aggregate, start, seconds, 0);
    server_free_ns_ = end;
    for (int d = 1; d <= devices_; ++d) {
      push(transfer(0, d, MessageType::model, device(d).part_parameters * 4, end), What::device_model, d);
    }
  }

  const SimulationInput& in_;
  std::vector<net::Link>& uplinks_;
  std::vector<net::Link>& downlinks_;
  int devices_;
  bool aggregates_ = true;
  SimulatedRound result_;
  std::vector<DeviceState> state_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> events_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> arrived_;  // by arrival
  std::uint64_t seq_ = 0;
  std::int64_t server_free_ns_ = 0;
  int models_ = 0;
};

}  // namespace

std::vector<std::int64_t> micro_batch_sizes(std::int64_t n, int m) {
  if (m < 1 || m > n) throw std::invalid_argument("micro_batch_sizes: need 1 <= m <= n");
  std::vector<std::int64_t> sizes;
  for (int i = 0; i < m; ++i) sizes.push_back(n / m + (i < n % m ? 1 : 0));
  return sizes;
}

std::vector<SimulatedRound> simulate(const SimulationInput& input) {
  if (input.method != "fl" && input.method != "sl" && input.method != "sfl" && input.method != "pipar") {
    throw std::invalid_argument("simulate: experiment.method = " + input.method +
                                " cannot be simulated yet (fl, sl, sfl, pipar can)");
  }
  if (input.devices.empty()) throw std::invalid_argument("simulate: no devices");
  std::vector<net::Link> uplinks, downlinks;
  for (const SimulatedDevice& device : input.devices) {
    uplinks.emplace_back(device.uplink, 0);
    downlinks.emplace_back(device.downlink, 0);
  }
  std::vector<SimulatedRound> rounds;
  std::int64_t start = 0;
  for (int round = 0; round < input.rounds; ++round) {
    rounds.push_back(RoundSimulation(input, uplinks, downlinks, round, start).run());
    start = rounds.back().end_ns;
  }
  return rounds;
}

}  // namespace cmlbed::plan
