#pragma once
// One stage of one rank: what the timeline records and the results file stores.
#include <cstdint>
#include <string>
#include <vector>

namespace cmlbed::trace {

// Where the time went: the rank's compute stream, or one direction of a device link.
enum class Lane : std::uint8_t { compute = 0, uplink = 1, downlink = 2 };

enum class EventKind : std::uint8_t {
  forward = 0,
  backward = 1,
  step = 2,       // optimizer step
  send = 3,       // enqueue -> last byte out
  recv = 4,       // first byte in -> complete
  wait = 5,       // blocked waiting for a message
  aggregate = 6,  // FedAvg of models
  evaluate = 7,   // test-set evaluation
  compute = 8,    // other compute (e.g. the transfer job's emulated work)
  sleep = 9,      // compute emulation: the stretch added by devices.slowdown
};

// The message a transfer carries or a wait is for. The values are net::MessageKind's
// plus one (0 = none), so the timeline can name messages without depending on net.
enum class MessageType : std::uint8_t {
  none = 0,
  activation = 1,
  gradient = 2,
  model = 3,
  transfer_up = 4,
  transfer_down = 5,
  control = 6,
};

// Whether a compute stage was held to a length (paced by devices.flops, or stretched
// by devices.slowdown on its thread's CPU time), and whether its work ran past it (the
// emulation did not hold for that stage: docs/explanation/fidelity.md).
enum class Held : std::uint8_t {
  no = 0,
  kept = 1,
  overran = 2,
};

// Names in enum order, as stored in HDF5 enum types and shown by h5py / h5dump.
const std::vector<std::string>& lane_names();
const std::vector<std::string>& event_kind_names();
const std::vector<std::string>& message_type_names();
const std::vector<std::string>& held_names();

struct Event {
  std::int32_t round = -1;
  std::int32_t batch = -1;
  std::int32_t micro_batch = -1;
  Lane lane = Lane::compute;
  EventKind kind = EventKind::compute;
  // send / recv: what the message carries; wait: the message waited for. It and `held`
  // sit in what was padding, so an event stays 48 bytes.
  MessageType message = MessageType::none;
  Held held = Held::no;
  std::int32_t peer = -1;  // the other rank of a transfer or wait, -1 for none
  std::int64_t bytes = 0;
  std::int64_t t_start_ns = 0;  // in rank 0's time base (see net/clock_sync)
  std::int64_t t_end_ns = 0;
};

// One row of the per-round table; the vectors have one entry per MPI rank.
struct RoundRecord {
  std::int32_t round = 0;
  std::int64_t t_start_ns = 0;  // the round's timed window on the server, rank 0's time
  std::int64_t t_end_ns = 0;    // base; busy/idle are measured inside it
  double wall_s = 0;
  std::int64_t bytes_up = 0;    // devices -> server, payload bytes
  std::int64_t bytes_down = 0;  // server -> devices
  std::int64_t messages_up = 0;    // messages devices -> server
  std::int64_t messages_down = 0;  // messages server -> devices
  double test_loss = 0;         // NaN when the round did not evaluate
  double test_accuracy = 0;     // per-device scope: the sample-weighted mean of device_accuracy
  std::vector<double> busy_s;  // union of the rank's compute intervals in the round
  std::vector<double> idle_s;  // wall_s - busy_s
  std::vector<double> flops;   // floating-point operations the rank trained with (no evaluation)
  std::vector<double> device_accuracy;  // each device's accuracy; NaN for the server / no score
  std::vector<double> mask_sparsity;    // adasplit: each device's server-mask sparsity; NaN elsewhere
  // Emulation fidelity (run/emulation_verdict.hpp), per rank: stages held to a length
  // (paced or stretched) and how far they ran past it; CPU got and run-queue wait; the
  // share of the host's CPU stolen. Empty (NaN in the file) for a simulated run.
  std::vector<double> paced_stages, paced_overran, paced_s, paced_overrun_s, paced_worst_ratio;
  std::vector<double> cpu_s, runqueue_s, involuntary_switches, host_steal, network_cpu_s, network_runqueue_s;
  std::int32_t emulation = -1;  // 0 faithful, 1 degraded, 2 broken; -1 not judged (simulated)
};

}  // namespace cmlbed::trace
