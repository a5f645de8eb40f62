#include "cmlbed/sim/schedule_simulator.hpp"
#include "cmlbed/sim/round_rules.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <queue>
#include <stdexcept>

#include "adasplit_round.hpp"
#include "local_loss_round.hpp"
#include "u_shaped_round.hpp"
#include "cmlbed/config/methods.hpp"
#include "round_recorder.hpp"

namespace cmlbed::sim {
namespace {

using trace::EventKind;
using trace::MessageType;

bool aggregates_after(const SimulationInput& input, int round) {
  return averages_after(round, input.aggregate_every, input.rounds);
}

class RoundSimulation {
 public:
  RoundSimulation(const SimulationInput& input, RoundRecorder record)
      : in_(input), method_(method_traits(input.method)), devices_(static_cast<int>(input.devices.size())),
        record_(std::move(record)) {
    const int round = record_.round();
    aggregates_ = method_.averages && aggregates_after(input, round);  // psl averages nothing
    state_.resize(static_cast<std::size_t>(devices_));
    const int streams = server_stream_count(input);
    stream_free_ns_.assign(static_cast<std::size_t>(streams), 0);
    arrived_.resize(static_cast<std::size_t>(streams));
    one_receive_per_device_ = streams == 1;
    held_.resize(static_cast<std::size_t>(devices_));
    queued_.assign(static_cast<std::size_t>(devices_), false);
    for (int d = 1; d <= devices_; ++d) state(d).turn_end = static_cast<int>(device(d).batches);
    if (method_.takes_turns) {
      std::vector<std::int64_t> batches;
      for (const SimulatedDevice& dev : input.devices) batches.push_back(dev.batches);
      turns_ = sl_turns(batches, input.sl_batches_per_turn);
    }
    if (method_.serves_batches_together) {
      std::vector<std::int64_t> batches;
      for (const SimulatedDevice& dev : input.devices) batches.push_back(dev.batches);
      together_ = psl_batches(batches);
    }
    if (method_.serves_in_device_order) {
      order_ = device_serving_order(input.seed, round, devices_);
      for (const SimulatedDevice& dev : input.devices) unserved_.push_back(dev.batches * dev.micro_batches);
      skip_served_devices();
    }
  }

  SimulatedRound run() {
    const std::int64_t start = record_.start_ns();
    if (method_.takes_turns) {
      if (!turns_.empty()) push(start, What::server_handover, turns_.front().device);
    } else {
      for (int d = 1; d <= devices_; ++d) {
        if (!method_.splits_model) {
          train_locally(d, start);
        } else {
          push(start, What::device_start_batch, d);
        }
      }
    }
    while (!events_.empty()) {
      const Pending next = events_.top();
      events_.pop();
      handle(next);
    }
    // Personalised sfl, pipar: the server averages its replicas once it has served every
    // micro-batch; no device sends or waits for anything.
    if (in_.personalised && aggregates_ && !method_.takes_turns) aggregate(server_free_ns());
    std::int64_t end = std::max(start, server_free_ns());
    for (const DeviceState& device : state_) end = std::max(end, device.done_ns);
    return record_.finish(end);
  }

 private:
  enum class What {
    device_start_batch, server_activation, server_free, device_gradient, server_model, device_model,
    server_handover,  // sl: the server sends the device part to the next turn's device
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
    int turn_end = 0;                                  // sl: the batch its turn ends before
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

  // fl: every mini-batch on the device, whole model, then the model to the server.
  void train_locally(int d, std::int64_t t) {
    const SimulatedDevice& dev = device(d);
    const std::int64_t n = in_.batch_size;
    for (int b = 0; b < dev.batches; ++b) {
      t = record_.compute(d, EventKind::forward, t, forward_stage(dev.part, n), b);
      t = record_.compute(d, EventKind::backward, t, backward_stage(dev.part, n), b);
      t = record_.compute(d, EventKind::step, t, step_stage(dev.part), b);
    }
    finish_training(d, t);
  }

  void finish_training(int d, std::int64_t t) {
    state(d).free_ns = t;
    if (in_.personalised && method_.splits_model) {  // the device part stays on the device
      state(d).done_ns = t;
      return;
    }
    if (method_.takes_turns) {  // the device part back to the server, for the next device
      const std::int64_t arrival = record_.transfer(d, 0, MessageType::model, device(d).part_state_values * 4, t);
      state(d).done_ns = arrival;
      push(arrival, What::server_return, d);
      return;
    }
    if (!aggregates_) {
      state(d).done_ns = t;
      return;
    }
    const std::int64_t bytes = device(d).part_state_values * 4;
    push(record_.transfer(d, 0, MessageType::model, bytes, t), What::server_model, d);
  }

  void handle(const Pending& p) {
    switch (p.what) {
      case What::device_start_batch: return start_batch(p.device, p.t);
      case What::server_activation: return arrive(p);
      case What::server_free: return serve(static_cast<std::size_t>(p.device), p.t);
      case What::device_gradient: return take_gradient(p);
      case What::server_model:
        ++models_;
        return aggregate_when_ready(p.t);
      case What::device_model: state(p.device).done_ns = p.t; return;
      case What::server_handover: return hand_over(p.device, p.t);
      case What::server_return:
        stream_free_ns_.front() = std::max(stream_free_ns_.front(), p.t);
        if (++turn_ < turns_.size()) push(p.t, What::server_handover, turns_[turn_].device);
        return;
    }
  }

  // sl: once the server has served the previous turn and has the part back, the part goes
  // to the device of turn turn_, which trains that turn's mini-batches when it arrives.
  void hand_over(int d, std::int64_t now) {
    state(d).turn_end = static_cast<int>(turns_[turn_].first_batch + turns_[turn_].batches);
    const std::int64_t start = std::max(now, server_free_ns());
    const std::int64_t arrival = in_.personalised
                                     ? record_.transfer(0, d, MessageType::control, in_.control_bytes, start)
                                     : record_.transfer(0, d, MessageType::model, device(d).part_state_values * 4, start);
    push(arrival, What::device_start_batch, d);
  }

  // The m forwards back to back, each activation leaving as soon as it exists.
  void start_batch(int d, std::int64_t t) {
    const SimulatedDevice& dev = device(d);
    DeviceState& s = state(d);
    // Personalised sl: a turn's word may come while the device still steps its last turn.
    t = std::max(t, s.free_ns);
    s.sizes = micro_batch_sizes(in_.batch_size, dev.micro_batches);
    s.gradients.assign(s.sizes.size(), std::nullopt);
    s.next_backward = 0;
    for (std::size_t i = 0; i < s.sizes.size(); ++i) {
      const std::int64_t n = s.sizes[i];
      t = record_.compute(d, EventKind::forward, t, forward_stage(dev.part, n), s.batch, static_cast<int>(i));
      const std::int64_t bytes = n * (dev.activation_bytes_per_sample + 8);  // activation + int64 labels
      const std::int64_t arrival =
          record_.transfer(d, 0, MessageType::activation, bytes, t, s.batch, static_cast<int>(i));
      push(arrival, What::server_activation, d, s.batch, static_cast<int>(i));
    }
    s.free_ns = t;
  }

  // Device d's server stream.
  std::size_t stream_of(int d) const { return static_cast<std::size_t>(d - 1) % stream_free_ns_.size(); }
  // When every stream is done.
  std::int64_t server_free_ns() const { return *std::max_element(stream_free_ns_.begin(), stream_free_ns_.end()); }

  // An activation at the server. With one stream the server keeps one receive posted
  // per device (serve_in_arrival_order) and posts the next when it takes the current one
  // into service: a device's later micro-batch that arrives meanwhile is held, and
  // counts as arriving when the one before it is taken, not when its bytes are in
  // (docs/explanation/simulator.md, "Schedules"). With several streams the main thread
  // only receives and queues, so arrival order is the bytes'.
  void arrive(const Pending& p) {
    if (method_.serves_batches_together) return gather(p);
    const auto d = static_cast<std::size_t>(p.device - 1);
    // sfl2: a device's receive is posted when its turn in the order comes.
    const bool not_its_turn = !order_.empty() && (order_at_ >= order_.size() || order_[order_at_] != p.device);
    if (not_its_turn || (one_receive_per_device_ && queued_[d])) {
      held_[d].push_back(p);
      return;
    }
    queued_[d] = true;
    arrived_[stream_of(p.device)].push(p);
    serve(stream_of(p.device), p.t);
  }

  // The next of device d's held activations enters the arrival order at `now`.
  void post_next_receive(int device, std::int64_t now) {
    const auto d = static_cast<std::size_t>(device - 1);
    queued_[d] = !held_[d].empty();
    if (!queued_[d]) return;
    Pending next = held_[d].front();
    held_[d].pop_front();
    next.t = std::max(next.t, now);
    next.seq = seq_++;
    arrived_[stream_of(device)].push(next);
  }

  // A server compute stream serving its devices' micro-batches in arrival order.
  void serve(std::size_t stream, std::int64_t now) {
    auto& arrived = arrived_[stream];
    if (stream_free_ns_[stream] > now || arrived.empty()) return;
    const Pending job = arrived.top();
    arrived.pop();
    post_next_receive(job.device, now);
    const SimulatedDevice& dev = device(job.device);
    // micro_batch_sizes(batch, m)[micro], without building the list for every micro-batch served
    const std::int64_t n = in_.batch_size / dev.micro_batches + (job.micro < in_.batch_size % dev.micro_batches ? 1 : 0);
    std::int64_t t = record_.compute(0, EventKind::forward, now, forward_stage(dev.server, n), job.batch, job.micro);
    t = record_.compute(0, EventKind::backward, t, backward_stage(dev.server, n), job.batch, job.micro);
    const std::int64_t arrival = record_.transfer(0, job.device, MessageType::gradient,
                                                  n * dev.activation_bytes_per_sample, t, job.batch, job.micro);
    push(arrival, What::device_gradient, job.device, job.batch, job.micro);
    if (job.micro + 1 == dev.micro_batches) {
      t = record_.compute(0, EventKind::step, t, step_stage(dev.server), job.batch);
      // Personalised sl: the turn is over once the server has served its last mini-batch.
      if (method_.takes_turns && in_.personalised && job.batch + 1 == state(job.device).turn_end) {
        push(t, What::server_return, job.device);
      }
    }
    stream_free_ns_[stream] = t;
    if (!order_.empty() && --unserved_[static_cast<std::size_t>(job.device - 1)] == 0) {
      skip_served_devices();  // sfl2: the next device's turn, its first held upload taken at t
      if (order_at_ < order_.size()) post_next_receive(order_[order_at_], t);
    }
    push(t, What::server_free, static_cast<int>(stream));
  }

  // psl: mini-batch b of the devices psl_batches lists (the runtime's rule too), served
  // as one batch once the last of them is in (a device sends its next only after this
  // one's gradient): one forward and backward of the one server part on all their
  // samples, the gradients out to each device, then the step.
  void gather(const Pending& p) {
    std::vector<Pending>& waiting = arrived_together_[p.batch];
    waiting.push_back(p);
    if (waiting.size() < together_[static_cast<std::size_t>(p.batch)].size()) return;
    std::sort(waiting.begin(), waiting.end(), [](const Pending& a, const Pending& b) { return a.device < b.device; });
    const SimulatedPart& server = device(waiting.front().device).server;  // one split for all
    const std::int64_t n = in_.batch_size * static_cast<std::int64_t>(waiting.size());
    std::int64_t t = record_.compute(0, EventKind::forward, std::max(p.t, server_free_ns()), forward_stage(server, n), p.batch, 0);
    t = record_.compute(0, EventKind::backward, t, backward_stage(server, n), p.batch, 0);
    for (const Pending& upload : waiting) {
      const std::int64_t arrival = record_.transfer(0, upload.device, MessageType::gradient,
                                                    in_.batch_size * device(upload.device).activation_bytes_per_sample,
                                                    t, p.batch, 0);
      push(arrival, What::device_gradient, upload.device, p.batch, 0);
    }
    stream_free_ns_.front() = record_.compute(0, EventKind::step, t, step_stage(server), p.batch);
    arrived_together_.erase(p.batch);
  }

  // sfl2: past the devices in the order whose micro-batches are all served.
  void skip_served_devices() {
    while (order_at_ < order_.size() && unserved_[static_cast<std::size_t>(order_[order_at_] - 1)] == 0) ++order_at_;
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
      s.free_ns =
          record_.compute(p.device, EventKind::backward, start, backward_stage(dev.part, n), s.batch, s.next_backward);
      ++s.next_backward;
    }
    if (s.next_backward < static_cast<int>(s.sizes.size())) return;
    s.free_ns = record_.compute(p.device, EventKind::step, s.free_ns, step_stage(dev.part), s.batch);
    if (++s.batch < s.turn_end) {
      push(s.free_ns, What::device_start_batch, p.device);
    } else {
      finish_training(p.device, s.free_ns);
    }
  }

  // FedAvg once every device's model is in and the server has served everything.
  void aggregate_when_ready(std::int64_t now) {
    if (models_ < devices_) return;
    const std::int64_t end = aggregate(std::max(now, server_free_ns()));
    for (int d = 1; d <= devices_; ++d) {
      push(record_.transfer(0, d, MessageType::model, device(d).part_state_values * 4, end), What::device_model, d);
    }
  }

  // The server's averaging from `start`: every device's whole model, or personalised its
  // server replica alone; sfl2: every device's part and the one server part once. Returns
  // its end.
  std::int64_t aggregate(std::int64_t start) {
    double seconds = in_.aggregate_s_per_parameter * static_cast<double>(in_.model_state_values) * devices_;
    if (method_.serves_in_device_order) {
      double values = static_cast<double>(in_.model_state_values - in_.devices.front().part_state_values);
      for (const SimulatedDevice& dev : in_.devices) values += in_.personalised ? 0.0 : static_cast<double>(dev.part_state_values);
      seconds = in_.aggregate_s_per_parameter * values;
    } else if (in_.personalised) {
      double values = 0;
      for (const SimulatedDevice& dev : in_.devices) values += static_cast<double>(in_.model_state_values - dev.part_state_values);
      seconds = in_.aggregate_s_per_parameter * values;
    }
    const std::int64_t end = record_.compute(0, EventKind::aggregate, start, work_stage(seconds));
    std::fill(stream_free_ns_.begin(), stream_free_ns_.end(), end);
    return end;
  }

  const SimulationInput& in_;
  const MethodTraits& method_;
  int devices_;
  RoundRecorder record_;
  bool aggregates_ = true;
  std::vector<DeviceState> state_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> events_;
  using ByArrival = std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>>;
  std::vector<ByArrival> arrived_;            // per server stream
  bool one_receive_per_device_ = true;
  std::vector<std::deque<Pending>> held_;     // per device: arrived, receive not posted yet
  std::vector<bool> queued_;                  // per device: one of its activations in arrived_
  std::uint64_t seq_ = 0;
  std::vector<std::int64_t> stream_free_ns_;  // per server stream (one for fl, sl)
  int models_ = 0;
  std::vector<SlTurn> turns_;  // sl: the round's turns, in order
  std::size_t turn_ = 0;       // sl: the turn under way
  std::vector<int> order_;     // sfl2: the order the server serves the devices in this round
  std::size_t order_at_ = 0;   // sfl2: the device being served (index into order_)
  std::vector<std::int64_t> unserved_;  // sfl2: per device, micro-batches not served yet
  std::vector<std::vector<int>> together_;  // psl: per mini-batch, the devices served together
  std::map<int, std::vector<Pending>> arrived_together_;  // psl: per mini-batch, the uploads in so far
};

// The inputs of the later plans' rounds: the run's, each device cut as the plan cuts it.
std::vector<SimulationInput> later_plan_inputs(const SimulationInput& input) {
  std::vector<SimulationInput> inputs;
  int after = 0;
  for (const PlanPhase& phase : input.later_plans) {
    if (!method_traits(input.method).plannable) {
      throw std::invalid_argument("simulate: plans adopted during the run need " +
                                  method_list(&MethodTraits::plannable, "or") + ", not " + input.method);
    }
    if (input.personalised) throw std::invalid_argument("simulate: personalised device parts are not re-split");
    if (phase.first_round <= after || phase.first_round >= input.rounds) {
      throw std::invalid_argument("simulate: a later plan from round " + std::to_string(phase.first_round) +
                                  " (0-based): later plans start in rounds 1..rounds-1, ascending");
    }
    if (phase.devices.size() != input.devices.size()) {
      throw std::invalid_argument("simulate: a later plan for " + std::to_string(phase.devices.size()) +
                                  " devices, the run has " + std::to_string(input.devices.size()));
    }
    after = phase.first_round;
    SimulationInput& next = inputs.emplace_back(input);
    next.later_plans.clear();
    for (std::size_t d = 0; d < input.devices.size(); ++d) {
      SimulatedDevice& device = next.devices[d];
      const SimulatedDevice& cut = phase.devices[d];
      device.part = cut.part;
      device.server = cut.server;
      device.micro_batches = cut.micro_batches;
      device.activation_bytes_per_sample = cut.activation_bytes_per_sample;
      device.part_state_values = cut.part_state_values;
    }
  }
  return inputs;
}

// One simulation of every round; with host_cores, under the load the previous pass booked.
// `later`: later_plan_inputs(input).
std::vector<SimulatedRound> simulate_pass(const SimulationInput& input, const std::vector<SimulationInput>& later,
                                          HostCores* host_cores) {
  std::vector<net::Link> uplinks, downlinks;
  for (const SimulatedDevice& device : input.devices) {
    uplinks.emplace_back(device.uplink, 0);
    downlinks.emplace_back(device.downlink, 0);
  }
  const int devices = static_cast<int>(input.devices.size());
  const MethodTraits& method = method_traits(input.method);
  std::vector<SimulatedRound> rounds;
  std::int64_t start = 0;
  std::size_t adopted = 0;  // later plans in force
  for (int round = 0; round < input.rounds; ++round) {
    while (adopted < later.size() && input.later_plans[adopted].first_round <= round) ++adopted;
    const SimulationInput& now = adopted == 0 ? input : later[adopted - 1];
    RoundRecorder record(uplinks, downlinks, devices, round, start, host_cores, input.transfer_events);
    // A method that sends no gradients trains each side on its own loss: adasplit with its
    // local phase and orchestrator, localloss with every device every round.
    const bool own_loss = method.splits_model && !method.sends_gradients;
    rounds.push_back(method.local_phase   ? adasplit_round(now, std::move(record))
                     : own_loss           ? local_loss_round(now, std::move(record))
                     : method.device_tail ? u_shaped_round(now, std::move(record))
                                          : RoundSimulation(now, std::move(record)).run());
    start = rounds.back().end_ns;
    // A method that never averages scores its models after every round.
    const bool evaluated = !method.averages || aggregates_after(input, round);
    if (evaluated) start += seconds_to_ns(input.evaluation_s);
  }
  return rounds;
}

// Whether every round's length moved by at most `tolerance` (relative) between passes.
bool settled(const std::vector<SimulatedRound>& before, const std::vector<SimulatedRound>& after, double tolerance) {
  for (std::size_t r = 0; r < after.size(); ++r) {
    const auto length = [](const SimulatedRound& round) { return static_cast<double>(round.end_ns - round.start_ns); };
    if (std::abs(length(after[r]) - length(before[r])) > tolerance * length(before[r])) return false;
  }
  return true;
}

}  // namespace

std::vector<std::int64_t> micro_batch_sizes(std::int64_t n, int m) {
  if (m < 1 || m > n) throw std::invalid_argument("micro_batch_sizes: need 1 <= m <= n");
  std::vector<std::int64_t> sizes;
  for (int i = 0; i < m; ++i) sizes.push_back(n / m + (i < n % m ? 1 : 0));
  return sizes;
}

int server_stream_count(const SimulationInput& input) {
  const int devices = static_cast<int>(input.devices.size());
  return method_traits(input.method).server_replicas ? std::max(1, std::min(input.server_streams, devices)) : 1;
}

std::vector<SimulatedRound> simulate(const SimulationInput& input) {
  if (const MethodTraits* method = find_method(input.method); method == nullptr || !method->simulatable) {
    throw std::invalid_argument("simulate: experiment.method = " + input.method + " cannot be simulated (" +
                                method_list(&MethodTraits::simulatable) + " can)");
  }
  if (input.devices.empty()) throw std::invalid_argument("simulate: no devices");
  if (input.host_cores < 0) throw std::invalid_argument("simulate: host_cores < 0");
  const std::vector<SimulationInput> later = later_plan_inputs(input);
  if (input.host_cores == 0) return simulate_pass(input, later, nullptr);
  // Processor sharing by fixed point: pass 0 runs at full speed and books its load; each
  // next pass runs under the load of the one before, until no round moves by more than
  // 0.5% and neither does the work's wall time (a schedule consistent with the load it
  // causes), or kMaxPasses. A stage that overlaps only itself converges geometrically
  // (each pass halves the gap), hence the dozen.
  constexpr int kMaxPasses = 12;
  constexpr double kTolerance = 0.005;
  HostCores host_cores(input.host_cores, input.host_slice_ns);
  std::vector<SimulatedRound> rounds = simulate_pass(input, later, &host_cores);
  for (int pass = 1; pass < kMaxPasses; ++pass) {
    host_cores.next_pass();
    std::vector<SimulatedRound> next = simulate_pass(input, later, &host_cores);
    const bool done = settled(rounds, next, kTolerance) && host_cores.settled(kTolerance);
    rounds = std::move(next);
    if (done) break;
  }
  return rounds;
}

}  // namespace cmlbed::sim
