#pragma once
// train.server_streams: k worker threads that serve different devices' micro-batches at
// once (sfl, pipar). Work is queued per stream and each stream runs its queue in order on
// its own thread, so work submitted to one stream in arrival order runs in arrival order;
// the caller maps each device to one stream (SplitLearning: device d -> (d - 1) mod k),
// so each server replica is only ever touched by one thread.
//
// A failure in a worker (an exception, an interrupt) stops every stream: the queued work
// is dropped, and the next submit(), check() or finish() rethrows the first failure.
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cmlbed::train {

class ServerStreams {
 public:
  // Starts `streams` threads; each runs `start_thread` first (its LibTorch thread count).
  ServerStreams(int streams, const std::function<void()>& start_thread);
  // Drops queued work and joins (an error path: finish() is the normal end).
  ~ServerStreams();
  ServerStreams(const ServerStreams&) = delete;
  ServerStreams& operator=(const ServerStreams&) = delete;

  void submit(int stream, std::function<void()> work);
  // Rethrows a worker's failure, if any.
  void check();
  // Waits until every stream has run all its work, joins the threads, rethrows a failure.
  void finish();

 private:
  void run(std::size_t stream, const std::function<void()>& start_thread);
  void stop_and_join(bool drop_work);

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::deque<std::function<void()>>> queues_;  // under mutex_
  bool closing_ = false;                                   // under mutex_: no more work comes
  std::exception_ptr failure_;                             // under mutex_: the first one
  std::vector<std::thread> threads_;
};

}  // namespace cmlbed::train
