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

// Names in enum order, as stored in HDF5 enum types and shown by h5py / h5dump.
const std::vector<std::string>& lane_names();
const std::vector<std::string>& event_kind_names();

struct Event {
  std::int32_t round = -1;
  std::int32_t batch = -1;
  std::int32_t micro_batch = -1;
  Lane lane = Lane::compute;
  EventKind kind = EventKind::compute;
  std::int32_t peer = -1;  // the other rank of a transfer, -1 for none
  std::int64_t bytes = 0;
  std::int64_t t_start_ns = 0;  // in rank 0's time base (see net/clock_sync)
  std::int64_t t_end_ns = 0;
};

// One row of the per-round table; busy_s / idle_s have one entry per MPI rank.
struct RoundRecord {
  std::int32_t round = 0;
  std::int64_t t_start_ns = 0;  // the round's timed window on the server, rank 0's time
  std::int64_t t_end_ns = 0;    // base; busy/idle are measured inside it
  double wall_s = 0;
  std::int64_t bytes_up = 0;    // devices -> server, payload bytes
  std::int64_t bytes_down = 0;  // server -> devices
  double test_loss = 0;         // NaN when the round did not evaluate
  double test_accuracy = 0;
  std::vector<double> busy_s;  // union of the rank's compute intervals in the round
  std::vector<double> idle_s;  // wall_s - busy_s
};

}  // namespace cmlbed::trace
