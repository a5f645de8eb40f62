#pragma once
// The state one transfer shares between its handle and the communication thread, and the
// completion signal wait_any() hangs on it. Private to src/net.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <vector>

#include "cmlbed/net/message.hpp"

namespace cmlbed::net::detail {

// What wait_any() sleeps on: raised by the first of its transfers to end. One signal is
// attached to several states at once.
struct CompletionSignal {
  std::mutex mutex;
  std::condition_variable raised_changed;
  bool raised = false;

  void raise() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      raised = true;
    }
    raised_changed.notify_all();
  }
};

// Shared by a handle and the communication thread, so dropping a handle never frees
// a buffer MPI still uses.
struct TransferState {
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  bool taken = false;
  std::exception_ptr error;
  // Orders completions across transfers (1, 2, ... in the order finish() ran), so that
  // wait_any() can hand out the earliest of several that ended while it slept.
  std::uint64_t completion_order = 0;
  // Signals to raise on finish(); guarded by `mutex`. Lock order: a state's mutex, then
  // a signal's (wait_any never holds a signal's mutex while it takes a state's).
  std::vector<CompletionSignal*> signals;
  Message message;
  MessageKind kind = MessageKind::control;  // set before the handle exists, never changed
  bool unshaped = false;  // a send past its link (Transport::Shaping::none)
  bool counted = true;    // goes into the transport's counters (Transport::set_counting)
  MessageHeader wire_header;  // the header as sent / received
  int peer = -1;
  int chunks_left = 0;
  std::int64_t next_offset = 0;  // receiver: where the next chunk receive goes
  std::int64_t t_start_ns = 0;

  // Marks the transfer ended (with `failure`, if any) and wakes its waiters. The
  // signals are raised under `mutex`, so a wait_any() that has unregistered (under the
  // same mutex) can free its signal at once.
  void finish(std::exception_ptr failure = nullptr);
};

}  // namespace cmlbed::net::detail
