#include "cmlbed/base/interrupt.hpp"

#include <csignal>
#include <cstring>

namespace cmlbed {
namespace {

// Written by the handler, read by the run: lock-free and async-signal-safe.
volatile std::sig_atomic_t requested = 0;

extern "C" void on_stop_signal(int signal) {
  if (requested != 0) {
    // The second signal: no more waiting for a safe point.
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  requested = signal;
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // blocking calls resume; the flag is looked at in slices
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

int interrupt_signal() { return requested; }

std::string signal_name(int signal) {
  if (signal == SIGTERM) return "SIGTERM";
  if (signal == SIGINT) return "SIGINT";
  return "signal " + std::to_string(signal);
}

}  // namespace cmlbed
