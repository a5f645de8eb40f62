#pragma once
// What a simulated round records, for every method's schedule: compute stages and
// messages as the timeline events the runtime records, each message booked on its
// device's link (the runtime's net::Link) as the transport's outbox books it.
#include <cstdint>
#include <vector>

#include "cmlbed/net/link.hpp"
#include "cmlbed/sim/schedule_simulator.hpp"
#include "cmlbed/trace/event.hpp"
#include "host_cores.hpp"

namespace cmlbed::sim {

std::int64_t seconds_to_ns(double seconds);

// values[n] (a stage's seconds or FLOPs at n samples); invalid_argument past its end.
double at(const std::vector<double>& values, std::int64_t n);

// One compute stage: its length with the rank's cores to itself, the CPU work in it and
// how the runtime turns the work's wall time into the stage's (SimulatedPart).
struct StageTime {
  double seconds = 0;
  double flops = 0;
  double work_s = 0;
  double stretch = 1;
  bool paced = false;
  int threads = 1;
  double wake_s = 0;  // work added when the rank's thread slept before the stage
};

// The stages of a part at n samples; a stage that is all work on `threads` cores (the
// server's aggregation).
StageTime forward_stage(const SimulatedPart& part, std::int64_t n);
StageTime backward_stage(const SimulatedPart& part, std::int64_t n);
StageTime step_stage(const SimulatedPart& part);
StageTime work_stage(double seconds, double flops = 0, int threads = 1);

class RoundRecorder;
// `rank` trains `part` on mini-batch b of n samples from `start`: forward, backward and
// step, one after the other; returns the step's end.
std::int64_t train_batch(RoundRecorder& record, const SimulatedPart& part, int rank, int b, std::int64_t n,
                         std::int64_t start);

class RoundRecorder {
 public:
  // uplinks/downlinks[d - 1]: device d's links, which keep their state across rounds.
  // host_cores: the cores the ranks share (nullptr: each rank has its own).
  // transfer_events: false records no send and recv events (SimulationInput::transfer_events).
  RoundRecorder(std::vector<net::Link>& uplinks, std::vector<net::Link>& downlinks, int devices, int round,
                std::int64_t start_ns, HostCores* host_cores = nullptr, bool transfer_events = true);

  int round() const { return result_.round; }
  std::int64_t start_ns() const { return result_.start_ns; }

  // A compute stage of `rank` from `start`: its event and FLOPs (and its work booked on
  // the host's cores); returns its end. A stage after a sleep of the rank's thread (a gap
  // since its last stage, or that stage's own sleep) has stage.wake_s more work, and so
  // does every stage when the ranks' threads outnumber the host's cores (time_shared_).
  std::int64_t compute(int rank, trace::EventKind kind, std::int64_t start, const StageTime& stage, int batch = -1,
                       int micro = -1);

  // A message of `bytes` payload bytes from `from` to `to` offered at now_ns, on the
  // device's uplink or downlink: the sender's send and the receiver's recv event, and its
  // bytes counted; returns its arrival.
  std::int64_t transfer(int from, int to, trace::MessageType type, std::int64_t bytes, std::int64_t now_ns,
                        int batch = -1, int micro = -1);

  // The round, ended at end_ns.
  SimulatedRound finish(std::int64_t end_ns);

 private:
  std::vector<net::Link>& uplinks_;
  std::vector<net::Link>& downlinks_;
  HostCores* host_cores_;
  bool transfer_events_;
  SimulatedRound result_;
  // Per rank: when its last stage of the round ended, and whether in a sleep (stretched
  // or paced past its work); the first stage of a round follows the wait between rounds.
  std::vector<std::int64_t> last_end_;
  std::vector<char> slept_;
  // The ranks' threads (a compute and a communication thread each) outnumber the host's
  // cores: other threads run on a rank's core between its stages and within them, so
  // every stage starts as cold as one after a sleep and takes the profile's wake_s too
  // (docs/explanation/simulator.md, "Ranks that share a host's cores").
  bool time_shared_ = false;
};

}  // namespace cmlbed::sim
