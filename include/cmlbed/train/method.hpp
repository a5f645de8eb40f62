#pragma once
// A collaborative-learning method is the schedule of one round, on the server (rank 0)
// and on each device. The driver (experiment.hpp) owns everything around it: clocks,
// links, transport, timeline, results file, round boundaries, progress and summary.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cmlbed/config/config.hpp"
#include "cmlbed/net/transport.hpp"
#include "cmlbed/trace/timeline.hpp"

namespace cmlbed::train {

struct RoundContext {
  int round = 0;
  int rank = 0;
  int devices = 0;
  double slowdown = 1.0;  // this rank's compute stretch (1 for the server)
  net::Transport& transport;
  trace::Timeline& timeline;
  std::chrono::nanoseconds timeout;  // longest wait for any one message
};

struct Evaluation {
  double loss = 0;
  double accuracy = 0;
};

class Method {
 public:
  virtual ~Method() = default;
  virtual void run_round(const RoundContext& context) = 0;
  // Called on the server after each round; nothing when the method does not evaluate.
  virtual std::optional<Evaluation> evaluate(const RoundContext& context) = 0;
  // On the server after the last round: named flat float32 weights to keep in the
  // results file (/model/<name>); nothing for methods without a model.
  virtual std::vector<std::pair<std::string, std::vector<float>>> final_state() { return {}; }
};

// Throws ConfigError when this build cannot run experiment.method (cheap: builds nothing).
void check_method_available(const Config& config);

// The method experiment.method names, for this rank. Throws ConfigError for a method
// this build cannot run.
std::unique_ptr<Method> make_method(const Config& config, int rank, int devices);

// The error for a wait that saw no progress within the timeout: names rank, round,
// stage and peer.
std::runtime_error timeout_error(const RoundContext& context, int peer, const char* stage);

// The server's receive loop: takes `expected[d]` messages of `kind` from each device d,
// one posted receive per device at a time, and hands each to `serve` as it arrives, in
// arrival order across devices. Throws timeout_error(stage) when no message arrives
// within the timeout.
void serve_in_arrival_order(const RoundContext& context, net::MessageKind kind,
                            const std::map<int, std::int64_t>& expected, const char* stage,
                            const std::function<void(int device, const net::Message&)>& serve);

// Waits for a receive, or throws a runtime error naming the stage and the peer once
// `timeout` has passed, so a dead rank or a lost message cannot hang the job forever.
net::Message receive_or_throw(net::RecvHandle& handle, const RoundContext& context, int peer,
                              const char* stage);
void wait_or_throw(const net::SendHandle& handle, const RoundContext& context, int peer,
                   const char* stage);

}  // namespace cmlbed::train
