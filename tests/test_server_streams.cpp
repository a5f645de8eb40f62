// ServerStreams (train.server_streams): each stream runs its work in submission order on
// its own thread, streams run at the same time, and a failure in one stops all and comes
// back to the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cmlbed/train/server_streams.hpp"

namespace cmlbed::train {
namespace {

TEST(ServerStreams, EachStreamRunsItsWorkInOrderOnOneThread) {
  std::vector<std::vector<int>> order(3);
  std::vector<std::vector<std::thread::id>> threads(3);
  std::atomic<int> started{0};
  ServerStreams streams(3, [&] { ++started; });
  for (int i = 0; i < 300; ++i) {
    const int s = i % 3;
    streams.submit(s, [&, s, i] {
      order[static_cast<std::size_t>(s)].push_back(i);
      threads[static_cast<std::size_t>(s)].push_back(std::this_thread::get_id());
    });
  }
  streams.finish();
  EXPECT_EQ(started.load(), 3);
  for (int s = 0; s < 3; ++s) {
    const auto& seen = order[static_cast<std::size_t>(s)];
    ASSERT_EQ(seen.size(), 100u);
    for (std::size_t j = 0; j < seen.size(); ++j) EXPECT_EQ(seen[j], s + 3 * static_cast<int>(j));
    const auto& ids = threads[static_cast<std::size_t>(s)];
    for (const auto& id : ids) EXPECT_EQ(id, ids.front());
    EXPECT_NE(ids.front(), std::this_thread::get_id());
  }
  EXPECT_NE(threads[0].front(), threads[1].front());
}

TEST(ServerStreams, StreamsRunAtTheSameTime) {
  // Work on stream 0 waits for work on stream 1: on one shared thread it would wait forever.
  std::promise<void> second_ran;
  std::shared_future<void> signal = second_ran.get_future().share();
  std::atomic<bool> first_saw_it{false};
  ServerStreams streams(2, [] {});
  streams.submit(0, [&] { first_saw_it = signal.wait_for(std::chrono::seconds(10)) == std::future_status::ready; });
  streams.submit(1, [&] { second_ran.set_value(); });
  streams.finish();
  EXPECT_TRUE(first_saw_it.load());
}

TEST(ServerStreams, AFailureStopsEveryStreamAndReachesTheCaller) {
  std::atomic<int> ran_after{0};
  ServerStreams streams(2, [] {});
  streams.submit(0, [] { throw std::runtime_error("replica 3: shape mismatch"); });
  // Wait until the failure is seen, then later work is refused with it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool failed = false;
  while (!failed && std::chrono::steady_clock::now() < deadline) {
    try {
      streams.check();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "replica 3: shape mismatch");
      failed = true;
    }
  }
  ASSERT_TRUE(failed);
  EXPECT_THROW(streams.submit(1, [&] { ++ran_after; }), std::runtime_error);
  EXPECT_THROW(streams.finish(), std::runtime_error);
  EXPECT_EQ(ran_after.load(), 0);
}

TEST(ServerStreams, AFailingThreadStartIsAFailure) {
  ServerStreams streams(2, [] { throw std::runtime_error("no threads"); });
  EXPECT_THROW(streams.finish(), std::runtime_error);
}

TEST(ServerStreams, DestroyingWithoutFinishDropsQueuedWorkAndJoins) {
  std::atomic<int> ran{0};
  {
    ServerStreams streams(1, [] {});
    streams.submit(0, [] { std::this_thread::sleep_for(std::chrono::milliseconds(50)); });
    for (int i = 0; i < 100; ++i) streams.submit(0, [&] { ++ran; });
  }
  EXPECT_LT(ran.load(), 100);
  EXPECT_THROW(ServerStreams(0, [] {}), std::invalid_argument);
}

}  // namespace
}  // namespace cmlbed::train
