#pragma once
// A collaborative-learning method is the schedule of one round, on the server (rank 0)
// and on each device, plus what each rank does in the evaluation phase after it. The
// driver (experiment.hpp) owns everything around it: clocks, links, transport,
// timeline, results file, round boundaries, progress and summary. Methods are made by
// name through method_registry.hpp.
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cmlbed/net/transport.hpp"
#include "cmlbed/trace/timeline.hpp"
#include "cmlbed/train/device_choice.hpp"
#include "cmlbed/train/evaluation.hpp"

// LibTorch's checkpoint archives, declared here so that the drivers and methods that
// include this header do not compile LibTorch's headers for them.
namespace torch::serialize {
class InputArchive;
class OutputArchive;
}  // namespace torch::serialize

namespace cmlbed::train {

struct RoundContext {
  int round = 0;
  int rank = 0;
  int devices = 0;
  double slowdown = 1.0;  // this rank's compute stretch (1 for the server)
  net::Transport& transport;
  trace::Timeline& timeline;
  std::chrono::nanoseconds timeout;  // longest wait for any one message
  EvaluationScope evaluation_scope = EvaluationScope::global;
  // Floating-point operations this rank has trained with in the round (forward,
  // backward, optimizer step; see compute_stage). Reset by the driver every round.
  double& flops;
  // devices.flops of this device, FLOP/s; 0 = not set (the server, or a device at this
  // machine's speed x slowdown). Set, each compute stage with FLOPs lasts FLOPs / rate.
  double flops_per_second = 0;
  // (with_flops_counter copies every member: a new one goes there too.)
};

// The same context counting its FLOPs into `flops`: a server stream's own counter (the
// driver's is one plain double, not to be shared between threads).
RoundContext with_flops_counter(const RoundContext& context, double& flops);

class Method {
 public:
  virtual ~Method() = default;
  virtual void run_round(const RoundContext& context) = 0;
  // On every rank after each round's timed window: what this rank scored (see
  // evaluation.hpp), nothing when it scored nothing this round. Ranks may exchange
  // messages here (with Transport::Shaping::none; on the timeline, not counted in the
  // round's bytes).
  virtual std::optional<Evaluation> evaluate(const RoundContext& context) = 0;
  // On the server after the last round: named flat float32 weights to keep in the
  // results file (/model/<name>); nothing for methods without a model.
  virtual std::vector<std::pair<std::string, std::vector<float>>> final_state() { return {}; }
  // On the server after each round, for methods whose server keeps a mask per device
  // (adasplit): each device's share of mask entries with sigmoid below 0.5, by rank.
  virtual std::map<int, double> mask_sparsity() const { return {}; }
  // On the server: the trivial rate its evaluations are to be read against
  // (evaluation.hpp's trivial_accuracy over the run's test set and partition); nothing
  // for a method that scores nothing, and on the devices.
  virtual std::optional<double> trivial_accuracy(EvaluationScope) const { return std::nullopt; }

  // Checkpoints (output.checkpoint, `cmlbed run --resume`). After a completed round
  // (training and evaluation) each rank saves what it needs to run the next rounds as if
  // it had never stopped: weights, optimizer states, and whatever else changes from round
  // to round. The driver saves the round count and LibTorch's default generator (dropout)
  // itself, and data orders derived from (seed, device, round), like LocalBatches, need
  // nothing. load_state gets a method freshly made from the same configuration for the
  // same rank and the archive its save_state wrote; a resumed run must end with the
  // weights of an uninterrupted one. state_archive.hpp saves modules and optimizers.
  // A method whose row in the method table (config/methods.hpp) is not checkpointable is
  // never checkpointed, keeps these defaults, and `--resume` refuses it (exit status 2).
  virtual void save_state(torch::serialize::OutputArchive& archive);
  virtual void load_state(torch::serialize::InputArchive& archive);

  // Re-planning (plan.replan, planner/replanning.hpp): on every rank, after a round that averaged
  // the models and its evaluation, outside the round's timed work: from the next round
  // on, device d splits at plan[d-1].split and cuts each mini-batch into
  // plan[d-1].micro_batches. The weights stay those of the averaged model. Methods
  // without such choices keep the default, which refuses (std::logic_error).
  virtual void apply_plan(const RoundContext& context, const std::vector<DeviceChoice>& plan);
};

// A compute stage of this rank: on the timeline as `kind` (lane compute), and `flops`
// added to the round's count. It lasts `flops` / `context.flops_per_second` when that is
// set and the stage has FLOPs (paced), otherwise `context.slowdown` times its measured
// length.
trace::Timeline::Scope compute_stage(const RoundContext& context, trace::EventKind kind,
                                     int batch = -1, int micro_batch = -1, double flops = 0);

// The error for a wait that saw no progress within the timeout: names rank, round,
// stage and peer.
std::runtime_error timeout_error(const RoundContext& context, int peer, const char* stage);

// The server's receive loop: takes `expected[d]` messages of `kind` from each device d,
// one posted receive per device at a time, and hands each to `serve` as it arrives, in
// arrival order across devices. Throws timeout_error(stage) when no message arrives
// within the timeout. Time spent blocked is on the timeline as `wait` events. `serve`
// may take the message (move from it). `between_waits`, when given, runs before each
// wait and may throw to end the loop (a server stream's failure).
void serve_in_arrival_order(const RoundContext& context, net::MessageKind kind,
                            const std::map<int, std::int64_t>& expected, const char* stage,
                            const std::function<void(int device, net::Message& message)>& serve,
                            const std::function<void()>& between_waits = nullptr);

// Waits for a receive, or throws a runtime error naming the stage and the peer once
// `timeout` has passed, so a dead rank or a lost message cannot hang the job forever.
// A wait that blocks is on the timeline as a `wait` event (peer, message kind).
net::Message receive_or_throw(net::RecvHandle& handle, const RoundContext& context, int peer,
                              const char* stage);
void wait_or_throw(const net::SendHandle& handle, const RoundContext& context, int peer,
                   const char* stage);

}  // namespace cmlbed::train
