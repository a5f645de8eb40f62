#pragma once
// The schedule simulator: the rounds of fl, sl, sfl, pipar and adasplit as the runtime
// runs them (src/train/federated_averaging.cpp, split_learning.cpp, adasplit_method.cpp), on a
// virtual clock, with the devices' links modelled by the runtime's own net::Link (token bucket, delay, traces,
// the transport's chunking), and the stages' lengths from a profile. It emits the
// timeline events the runtime records, so a simulated run becomes an ordinary results
// file (`cmlbed simulate`) and its predictions can be checked against measured runs.
//
// Ranks that share a host's cores (host_cores) slow each other down: see SimulationInput.
// What it leaves out, and the runtime does: the start-up before round 1, wait events,
// the time to turn tensors into messages and back and to copy models between modules,
// and the loss on the server (a few microseconds).
#include <cstdint>
#include <string>
#include <vector>

#include "cmlbed/net/link.hpp"
#include "cmlbed/trace/event.hpp"

namespace cmlbed::sim {

// Seconds (or FLOPs) of one compute stage at n samples (index n = 0 .. batch size).
using SecondsBySamples = std::vector<double>;
using FlopsBySamples = std::vector<double>;

// One part of the model on one side: its stage lengths and the FLOPs they count.
struct SimulatedPart {
  SecondsBySamples forward_s, backward_s;
  double step_s = 0;
  FlopsBySamples forward_flops, backward_flops;
  double step_flops = 0;
  // How much of a stage is CPU work, for ranks that share a host's cores
  // (SimulationInput::host_cores). The runtime runs a stage's real work, then sleeps:
  // a timed part (devices.slowdown = stretch) lasts stretch x its work's wall time, its
  // work seconds / stretch; a paced part (devices.flops) lasts at least its seconds, its
  // work forward_work_s, ... (this host's time for it; empty: the seconds). The work uses
  // `threads` cores.
  double stretch = 1;
  bool paced = false;
  SecondsBySamples forward_work_s, backward_work_s;
  double step_work_s = 0;
  int threads = 1;
  // CPU work a stage adds when its thread slept before it: the rank computed nothing just
  // before, or its last stage ended in the sleep of a slowdown or pacing (RankProfile::wake_s).
  double wake_s = 0;
};

struct SimulatedDevice {
  int micro_batches = 1;             // per mini-batch (1 for fl and sfl)
  std::int64_t batches = 1;          // mini-batches per round
  std::int64_t samples = 0;          // its training samples (the weight of its model)
  net::LinkSpec uplink, downlink;    // downlink: the server's link to this device
  SimulatedPart part;                // its part (fl: the whole model)
  SimulatedPart server;              // the server's part for this device (empty for fl)
  std::int64_t activation_bytes_per_sample = 0;  // float32 output of its part (0 for fl)
  std::int64_t part_state_values = 0;  // its part's parameters and buffers: what it uploads for averaging
  // ushaped (sim/u_shaped_round.hpp): the device's tail, the last layers and the loss
  // (`part` is its head, `server` its middle), the middle's float32 output per sample,
  // and the tail's parameters and buffers (uploaded with the head for averaging).
  SimulatedPart tail;
  std::int64_t middle_bytes_per_sample = 0;
  std::int64_t tail_state_values = 0;
};

// adasplit: rounds before `local_rounds` are local (the devices train alone, nothing is
// sent); in the others, for each mini-batch index b the server tells every device that
// has one whether it was chosen (a control word, SimulationInput::control_bytes, sent
// when the server is done with b - 1), a device waits for that word after its step, a
// chosen one uploads its activation, and the server trains on the uploads of b one by
// one, in device order.
// chosen[r - local_rounds][b]: the devices chosen for mini-batch b of round r, ascending
// (the orchestrator's picks, decided by the caller: they depend on its policy).
struct AdaSplitSchedule {
  int local_rounds = 0;
  std::vector<std::vector<std::vector<int>>> chosen;
};

// A plan adopted during the run (plan.replan = on_change): from round `first_round` on
// (0-based), device d's part, server part, micro-batches, activation size and part size
// are devices[d-1]'s. The links, shares of the data and mini-batches stay the run's
// (SimulationInput::devices'): only where the model is cut and into how many pieces moves.
struct PlanPhase {
  int first_round = 0;
  std::vector<SimulatedDevice> devices;
};

struct SimulationInput {
  std::string method;  // a simulatable row of the method table (config/methods.hpp)
  std::int64_t batch_size = 32;
  int rounds = 1;
  int aggregate_every = 1;
  std::int64_t model_state_values = 0;  // the whole model's parameters and buffers (averaged on the server)
  double aggregate_s_per_parameter = 0;  // per model copy averaged
  std::vector<SimulatedDevice> devices;  // index d-1 = device rank d
  // sfl, pipar: server compute streams (train.server_streams): device d is served on
  // stream (d - 1) mod k, each stream in arrival order, each at the profile's speed (as
  // if every stream had its own cores).
  int server_streams = 1;
  // sfl2: the seed of the order in which the server serves the devices each round
  // (train.seed; sim::device_serving_order).
  std::uint64_t seed = 1;
  // sl: mini-batches per turn (sl.batches_per_turn; 0: a device's whole round), turns
  // ordered by sim::sl_turns.
  std::int64_t sl_batches_per_turn = 0;
  // sl, sfl, pipar with train.personalised: no device part travels. sfl and pipar average
  // the server replicas alone once the server has served every micro-batch (nothing up or
  // down); in sl the server starts each turn with a `control_bytes` word once it has
  // served the previous turn, and nothing comes back.
  bool personalised = false;
  // The payload of the server's control words (adasplit's choices, personalised sl's
  // turn starts): one uint8.
  std::int64_t control_bytes = 1;
  // Cores of the one host every rank runs on (plan.host_cores); 0: each rank has cores
  // of its own. With C > 0 the stages' CPU work shares C cores: work progresses at
  // min(1, C / n(t)), n(t) the cores asked for by all work running at t (processor
  // sharing), found by simulating again until the rounds settle (schedule_simulator.cpp).
  int host_cores = 0;
  // With host_cores: the scheduler's slice there (plan.host_slice); a message arriving
  // while every core is busy is seen 3 half-slices late (sim/host_cores.hpp). 0: not.
  std::int64_t host_slice_ns = 0;
  // Seconds between a round and the next when the server evaluates after it (rounds that
  // aggregate; every round for sl and adasplit): the runtime scores the test set there,
  // outside the rounds' timed work, but link traces keep running.
  double evaluation_s = 0;
  AdaSplitSchedule adasplit;             // adasplit only
  // localloss: a device uploads the activation of every upload_every-th mini-batch
  // (localloss.upload_every; sim/local_loss_round.hpp).
  std::int64_t upload_every = 1;
  // sfl, pipar: plans adopted between rounds, by first_round ascending (empty: the
  // devices above hold for every round).
  std::vector<PlanPhase> later_plans;
  // false: messages are booked and counted (SimulatedRound::bytes_up, bytes_down) but
  // leave no send and recv events, half of all events: what a prediction needs (the
  // planner), at half the memory.
  bool transfer_events = true;
};

struct SimulatedRound {
  int round = 0;
  std::int64_t start_ns = 0, end_ns = 0;
  std::vector<std::vector<trace::Event>> events;  // per rank
  std::vector<double> flops;                      // per rank
  std::int64_t bytes_up = 0, bytes_down = 0;      // payload bytes devices -> server and back
  // Per rank: the lengths its held stages (paced, or stretched on one thread) were held
  // to, and how far their work ran past them under the host's load (host_cores): what
  // the run's fidelity record will measure (docs/explanation/fidelity.md).
  std::vector<std::int64_t> held_ns, overrun_ns;
};

// Throws std::invalid_argument for a method it cannot simulate or inconsistent input.
std::vector<SimulatedRound> simulate(const SimulationInput& input);

// The sizes tensor_split gives for n samples in m pieces: the first n % m one larger.
std::vector<std::int64_t> micro_batch_sizes(std::int64_t n, int m);

// The server's compute streams in a round of `input` (train.server_streams, at most one
// per device, 1 where one server part serves every device).
int server_stream_count(const SimulationInput& input);

}  // namespace cmlbed::sim
