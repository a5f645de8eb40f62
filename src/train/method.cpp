#include "cmlbed/train/method.hpp"

#include <stdexcept>
#include <vector>

#include "cmlbed/config/config_error.hpp"
#include "federated_averaging.hpp"
#include "split_learning.hpp"
#include "transfer_method.hpp"

namespace cmlbed::train {
std::runtime_error timeout_error(const RoundContext& context, int peer, const char* stage) {
  return std::runtime_error("rank " + std::to_string(context.rank) + ": round " + std::to_string(context.round) +
         ": no progress on '" + stage + "' with rank " + std::to_string(peer) + " within " +
         std::to_string(std::chrono::duration<double>(context.timeout).count()) +
         " s (experiment.timeout); is that rank alive?");
}

void check_method_available(const Config& config) {
  const std::string& name = config.text("experiment.method");
  if (name == "adasplit") {
    throw ConfigError("experiment.method = adasplit is not available in this build yet; "
                      "available: fl, sl, sfl, pipar, transfer");
  }
}

std::unique_ptr<Method> make_method(const Config& config, int rank, int devices) {
  const std::string& name = config.text("experiment.method");
  if (name == "transfer") return std::make_unique<TransferMethod>(config, rank, devices);
  if (name == "fl") return std::make_unique<FederatedAveraging>(config, rank, devices);
  if (name == "sfl") return std::make_unique<SplitLearning>(config, SplitSchedule::sfl, rank, devices);
  if (name == "pipar") return std::make_unique<SplitLearning>(config, SplitSchedule::pipar, rank, devices);
  if (name == "sl") return std::make_unique<SplitLearning>(config, SplitSchedule::sl, rank, devices);
  throw ConfigError("experiment.method = " + name +
                    " is not available in this build yet; available: fl, sl, sfl, pipar, transfer");
}

void serve_in_arrival_order(const RoundContext& context, net::MessageKind kind,
                            const std::map<int, std::int64_t>& expected, const char* stage,
                            const std::function<void(int device, const net::Message&)>& serve) {
  // One posted receive per device still owed messages, in device order (so a timeout
  // names the lowest device still pending). The main thread sleeps in wait_any until a
  // receive completes: measured with `cmlbed-bench-runtime --only server-wait` (8 MiB
  // at 10 mbit, 6.7 s), polling every 50 us woke the server's main thread 8,700 times a
  // second and cost 10.9% of a core; the blocking wait 0.003% and no wake-up.
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
    // Of several complete receives, wait_any gives the earliest: arrival order.
    const auto ready = net::wait_any(waiting, std::chrono::steady_clock::now() + context.timeout);
    if (!ready) throw timeout_error(context, devices.front(), stage);
    const std::size_t i = *ready;
    const int device = devices[i];
    const net::Message message = posted[i].wait();
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
  auto message = handle.wait_for(context.timeout);
  if (!message) throw timeout_error(context, peer, stage);
  return std::move(*message);
}

void wait_or_throw(const net::SendHandle& handle, const RoundContext& context, int peer,
                   const char* stage) {
  if (!handle.wait_for(context.timeout)) {
    throw timeout_error(context, peer, stage);
  }
}

}  // namespace cmlbed::train
