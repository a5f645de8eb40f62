// The caller's side of a transfer: waiting on one handle, and wait_any over several.
#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>

#include "cmlbed/net/transport.hpp"
#include "transfer_state.hpp"

namespace cmlbed::net {

namespace detail {

namespace {
std::atomic<std::uint64_t> completions{0};
}

void TransferState::finish(std::exception_ptr failure) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
    error = failure;
    completion_order = ++completions;
    for (CompletionSignal* signal : signals) signal->raise();
  }
  changed.notify_all();
}

}  // namespace detail

using detail::CompletionSignal;
using detail::TransferState;

namespace {

void wait_done(TransferState& state) {
  std::unique_lock<std::mutex> lock(state.mutex);
  state.changed.wait(lock, [&] { return state.done; });
  if (state.error) std::rethrow_exception(state.error);
}

bool wait_done_for(TransferState& state, std::chrono::nanoseconds timeout) {
  std::unique_lock<std::mutex> lock(state.mutex);
  if (!state.changed.wait_for(lock, timeout, [&] { return state.done; })) return false;
  if (state.error) std::rethrow_exception(state.error);
  return true;
}

Message take_message(TransferState& state) {
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.taken) throw std::logic_error("RecvHandle: the message was already taken");
  state.taken = true;
  return std::move(state.message);
}

// A completion signal hung on several transfers for one wait_any(). Its destructor
// takes it off every state before it goes (finish() raises signals under the state's
// mutex), so no state keeps a pointer to it past the wait, whatever throws.
class SignalRegistration {
 public:
  explicit SignalRegistration(const std::vector<TransferState*>& states) : states_(states) {}
  ~SignalRegistration() {
    for (TransferState* state : states_) {
      std::lock_guard<std::mutex> lock(state->mutex);
      auto& list = state->signals;
      list.erase(std::remove(list.begin(), list.end(), &signal_), list.end());
    }
  }
  SignalRegistration(const SignalRegistration&) = delete;
  SignalRegistration& operator=(const SignalRegistration&) = delete;

  // False as soon as one transfer is already done (no need to wait).
  bool register_all() {
    for (TransferState* state : states_) {
      std::lock_guard<std::mutex> lock(state->mutex);
      if (state->done) return false;
      state->signals.push_back(&signal_);
    }
    return true;
  }

  void wait_until(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(signal_.mutex);
    signal_.raised_changed.wait_until(lock, deadline, [&] { return signal_.raised; });
  }

 private:
  const std::vector<TransferState*>& states_;
  CompletionSignal signal_;
};

// The state behind a handle; a default-constructed or detached handle has none.
TransferState& state_of(const std::shared_ptr<TransferState>& state, const char* what) {
  if (!state) throw std::logic_error(std::string(what) + ": the handle holds no transfer (default-constructed or detached)");
  return *state;
}

}  // namespace

MessageKind SendHandle::kind() const { return state_of(state_, "SendHandle::kind").kind; }
MessageKind RecvHandle::kind() const { return state_of(state_, "RecvHandle::kind").kind; }

bool SendHandle::done() const {
  TransferState& state = state_of(state_, "SendHandle::done");
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.done;
}
void SendHandle::wait() const { wait_done(state_of(state_, "SendHandle::wait")); }
bool SendHandle::wait_for(std::chrono::nanoseconds timeout) const {
  return wait_done_for(state_of(state_, "SendHandle::wait_for"), timeout);
}

bool RecvHandle::ready() const {
  TransferState& state = state_of(state_, "RecvHandle::ready");
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.done;
}
Message RecvHandle::wait() {
  TransferState& state = state_of(state_, "RecvHandle::wait");
  wait_done(state);
  return take_message(state);
}
std::optional<Message> RecvHandle::wait_for(std::chrono::nanoseconds timeout) {
  TransferState& state = state_of(state_, "RecvHandle::wait_for");
  if (!wait_done_for(state, timeout)) return std::nullopt;
  return take_message(state);
}

std::optional<std::size_t> wait_any(const std::vector<const RecvHandle*>& handles,
                                    std::chrono::steady_clock::time_point deadline) {
  std::vector<TransferState*> states;
  states.reserve(handles.size());
  for (const RecvHandle* handle : handles) {
    if (handle == nullptr || !handle->state_) {
      throw std::invalid_argument("wait_any: a handle without a posted receive");
    }
    states.push_back(handle->state_.get());
  }
  // The earliest completed transfer, if any (a state's completion order is set once,
  // under its mutex).
  const auto earliest_done = [&]() -> std::optional<std::size_t> {
    std::optional<std::size_t> best;
    std::uint64_t best_order = 0;
    for (std::size_t i = 0; i < states.size(); ++i) {
      std::lock_guard<std::mutex> lock(states[i]->mutex);
      if (states[i]->done && (!best || states[i]->completion_order < best_order)) {
        best = i;
        best_order = states[i]->completion_order;
      }
    }
    return best;
  };
  {
    SignalRegistration registration(states);
    // Registered under each state's mutex: a transfer that ends before its
    // registration is seen as done below, one that ends after raises the signal.
    if (registration.register_all()) registration.wait_until(deadline);
  }  // unregistered here, even when registering or waiting threw
  return earliest_done();
}

}  // namespace cmlbed::net
