#pragma once
// SIGTERM and SIGINT end a run cleanly: Slurm's time limit and scancel send SIGTERM, and
// mpirun forwards both to every rank. The first signal only sets a flag that the run
// looks at in its safe points (every wait for a message, in slices of kInterruptCheck,
// and each round boundary); a second one ends the process at once (default action).
#include <chrono>
#include <stdexcept>
#include <string>

namespace cmlbed {

// How often a blocked wait looks at the flag: a stop request is seen within this.
constexpr std::chrono::milliseconds kInterruptCheck{100};

// Installs the handlers (idempotent). Call once, early in main.
void install_interrupt_handlers();

// The signal that asked to stop (SIGTERM, SIGINT), 0 if none has come.
int interrupt_signal();

// "SIGTERM", "SIGINT", or "signal N".
std::string signal_name(int signal);

// Thrown at a safe point after a stop request: unwinds a round that cannot finish.
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal)
      : std::runtime_error("interrupted by " + signal_name(signal)), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

// Throws Interrupted if a stop was requested.
inline void throw_if_interrupted() {
  if (const int signal = interrupt_signal()) throw Interrupted(signal);
}

}  // namespace cmlbed
