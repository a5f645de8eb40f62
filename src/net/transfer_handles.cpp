// The caller's side of a transfer: waiting on one handle, and wait_any over several.
#include <algorithm>
#include <atomic>
#include <stdexcept>

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

}  // namespace

MessageKind SendHandle::kind() const { return state_->kind; }
MessageKind RecvHandle::kind() const { return state_->kind; }

bool SendHandle::done() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->done;
}
void SendHandle::wait() const { wait_done(*state_); }
bool SendHandle::wait_for(std::chrono::nanoseconds timeout) const {
  return wait_done_for(*state_, timeout);
}

bool RecvHandle::ready() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->done;
}
Message RecvHandle::wait() {
  wait_done(*state_);
  return take_message(*state_);
}
std::optional<Message> RecvHandle::wait_for(std::chrono::nanoseconds timeout) {
  if (!wait_done_for(*state_, timeout)) return std::nullopt;
  return take_message(*state_);
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
  CompletionSignal signal;
  // Registered under each state's mutex: a transfer that ends before its registration
  // is seen as done below, one that ends after raises the signal.
  bool any_done = false;
  for (TransferState* state : states) {
    std::lock_guard<std::mutex> lock(state->mutex);
    if (state->done) {
      any_done = true;
      break;
    }
    state->signals.push_back(&signal);
  }
  if (!any_done) {
    std::unique_lock<std::mutex> lock(signal.mutex);
    signal.raised_changed.wait_until(lock, deadline, [&] { return signal.raised; });
  }
  // Unregister before `signal` goes: finish() raises signals under the state's mutex.
  for (TransferState* state : states) {
    std::lock_guard<std::mutex> lock(state->mutex);
    auto& list = state->signals;
    list.erase(std::remove(list.begin(), list.end(), &signal), list.end());
  }
  return earliest_done();
}

}  // namespace cmlbed::net
