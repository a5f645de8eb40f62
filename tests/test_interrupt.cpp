// SIGTERM / SIGINT: the first only asks the run to stop (a flag its safe points read),
// a second ends the process at once.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "cmlbed/base/interrupt.hpp"

namespace cmlbed {
namespace {

TEST(Interrupt, FirstSignalAsksSecondEnds) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    install_interrupt_handlers();
    if (interrupt_signal() != 0) ::_exit(10);
    std::raise(SIGTERM);
    if (interrupt_signal() != SIGTERM) ::_exit(11);
    try {
      throw_if_interrupted();
      ::_exit(12);
    } catch (const Interrupted& stop) {
      if (stop.signal() != SIGTERM || std::string(stop.what()) != "interrupted by SIGTERM") ::_exit(13);
    }
    std::raise(SIGINT);  // the second: default action, the process ends here
    ::_exit(14);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGINT);
}

TEST(Interrupt, SignalNames) {
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_name(SIGINT), "SIGINT");
  EXPECT_EQ(signal_name(SIGUSR1), "signal " + std::to_string(SIGUSR1));
}

}  // namespace
}  // namespace cmlbed
