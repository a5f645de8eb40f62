#include "cmlbed/train/method.hpp"

#include <stdexcept>
#include <thread>

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
  std::map<int, std::int64_t> left = expected;
  std::map<int, net::RecvHandle> posted;
  for (const auto& [device, count] : left) {
    if (count > 0) posted[device] = context.transport.post_recv(device, kind);
  }
  auto deadline = std::chrono::steady_clock::now() + context.timeout;
  while (!posted.empty()) {
    bool served = false;
    for (auto it = posted.begin(); it != posted.end();) {
      const int device = it->first;
      if (!it->second.ready()) {
        ++it;
        continue;
      }
      const net::Message message = it->second.wait();
      if (--left[device] > 0) {
        it->second = context.transport.post_recv(device, kind);
        ++it;
      } else {
        it = posted.erase(it);
      }
      serve(device, message);
      served = true;
    }
    if (served) {
      deadline = std::chrono::steady_clock::now() + context.timeout;
    } else if (std::chrono::steady_clock::now() > deadline) {
      throw timeout_error(context, posted.begin()->first, stage);
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
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
