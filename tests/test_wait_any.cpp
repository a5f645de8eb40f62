// net::wait_any on transfer states finished by another thread, as the communication
// thread finishes them (no MPI needed): it returns the first to complete, nothing at the
// deadline, wakes on a failure, returns at once for a completed handle, and leaves no
// signal behind, also when transfers end while it registers.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cmlbed/net/transport.hpp"
#include "net/transfer_state.hpp"

namespace cmlbed::net {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct Posted {
  std::vector<std::shared_ptr<detail::TransferState>> states;
  std::vector<RecvHandle> handles;

  explicit Posted(int n) {
    for (int i = 0; i < n; ++i) {
      states.push_back(std::make_shared<detail::TransferState>());
      handles.emplace_back(states.back());
    }
  }
  std::vector<const RecvHandle*> pointers() const {
    std::vector<const RecvHandle*> out;
    for (const auto& h : handles) out.push_back(&h);
    return out;
  }
  bool no_signals_left() {
    for (auto& s : states) {
      std::lock_guard<std::mutex> lock(s->mutex);
      if (!s->signals.empty()) return false;
    }
    return true;
  }
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

TEST(WaitAny, ReturnsTheFirstToComplete) {
  Posted posted(3);
  std::thread finisher([&] {
    std::this_thread::sleep_for(milliseconds(20));
    posted.states[2]->finish();
    std::this_thread::sleep_for(milliseconds(200));
    posted.states[0]->finish();
  });
  const auto start = Clock::now();
  const auto first = wait_any(posted.pointers(), start + std::chrono::seconds(10));
  const double waited = seconds_since(start);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(*first, 2u);
  EXPECT_LT(waited, 2.0) << "woke at the deadline, not at the completion";
  finisher.join();
  // Both complete now: the one that completed first comes first, whatever its index.
  EXPECT_EQ(wait_any(posted.pointers(), Clock::now()), std::optional<std::size_t>(2));
  EXPECT_TRUE(posted.no_signals_left());
}

TEST(WaitAny, ReturnsNothingAtTheDeadline) {
  Posted posted(2);
  const auto start = Clock::now();
  const auto deadline = start + milliseconds(50);
  EXPECT_EQ(wait_any(posted.pointers(), deadline), std::nullopt);
  EXPECT_GE(Clock::now(), deadline);
  EXPECT_LT(seconds_since(start), 5.0);
  EXPECT_TRUE(posted.no_signals_left());
}

TEST(WaitAny, AFailedTransferWakesItAndItsErrorIsRethrownByWait) {
  Posted posted(2);
  std::thread finisher([&] {
    std::this_thread::sleep_for(milliseconds(20));
    posted.states[1]->finish(std::make_exception_ptr(std::runtime_error("peer gone")));
  });
  const auto start = Clock::now();
  const auto failed = wait_any(posted.pointers(), start + std::chrono::seconds(10));
  EXPECT_LT(seconds_since(start), 2.0);
  finisher.join();
  ASSERT_EQ(failed, std::optional<std::size_t>(1));
  try {
    posted.handles[1].wait();
    ADD_FAILURE() << "wait() did not rethrow the transfer's failure";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "peer gone");
  }
}

TEST(WaitAny, AHandleAlreadyCompleteReturnsAtOnce) {
  Posted posted(3);
  posted.states[1]->finish();
  // The deadline has passed already: a completed handle is still returned.
  EXPECT_EQ(wait_any(posted.pointers(), Clock::now() - std::chrono::seconds(1)),
            std::optional<std::size_t>(1));
  EXPECT_TRUE(posted.no_signals_left());
}

TEST(WaitAny, RefusesAHandleWithoutAReceive) {
  const RecvHandle empty;
  EXPECT_THROW(wait_any({&empty}, Clock::now()), std::invalid_argument);
}

TEST(WaitAny, TransfersEndingWhileItRegistersAreNeverMissed) {
  // The finishers race the registration; a missed completion would sleep to the
  // 30 s deadline. Two finishers raise the same signal at once on different states.
  for (int round = 0; round < 500; ++round) {
    Posted posted(4);
    const auto a = static_cast<std::size_t>(round % 4), b = static_cast<std::size_t>((round + 1) % 4);
    std::thread first([&] { posted.states[a]->finish(); });
    std::thread second([&] { posted.states[b]->finish(); });
    const auto start = Clock::now();
    const auto got = wait_any(posted.pointers(), start + std::chrono::seconds(30));
    first.join();
    second.join();
    ASSERT_TRUE(got.has_value()) << "round " << round;
    EXPECT_TRUE(*got == a || *got == b) << "round " << round << ": " << *got;
    ASSERT_LT(seconds_since(start), 10.0) << "round " << round << ": a completion was missed";
    ASSERT_TRUE(posted.no_signals_left()) << "round " << round;
  }
}

TEST(WaitAny, SeveralWaitersOnOneTransferAllWake) {
  Posted posted(2);
  std::vector<std::optional<std::size_t>> got(3);
  std::vector<std::thread> waiters;
  for (auto& g : got) {
    waiters.emplace_back([&] { g = wait_any(posted.pointers(), Clock::now() + std::chrono::seconds(10)); });
  }
  std::this_thread::sleep_for(milliseconds(20));
  posted.states[0]->finish();
  for (auto& w : waiters) w.join();
  for (const auto& g : got) EXPECT_EQ(g, std::optional<std::size_t>(0));
  EXPECT_TRUE(posted.no_signals_left());
}

}  // namespace
}  // namespace cmlbed::net
