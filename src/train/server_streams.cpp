#include "cmlbed/train/server_streams.hpp"

#include <stdexcept>

namespace cmlbed::train {

ServerStreams::ServerStreams(int streams, const std::function<void()>& start_thread) {
  if (streams < 1) throw std::invalid_argument("server streams: need at least one stream");
  queues_.resize(static_cast<std::size_t>(streams));
  try {
    for (std::size_t s = 0; s < queues_.size(); ++s) {
      threads_.emplace_back([this, s, start_thread] { run(s, start_thread); });
    }
  } catch (...) {
    stop_and_join(true);
    throw;
  }
}

ServerStreams::~ServerStreams() { stop_and_join(true); }

void ServerStreams::submit(int stream, std::function<void()> work) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_) std::rethrow_exception(failure_);
    if (closing_) throw std::logic_error("server streams: submit after finish");
    queues_.at(static_cast<std::size_t>(stream)).push_back(std::move(work));
  }
  changed_.notify_all();
}

void ServerStreams::check() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failure_) std::rethrow_exception(failure_);
}

void ServerStreams::finish() {
  stop_and_join(false);
  check();
}

void ServerStreams::stop_and_join(bool drop_work) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
    if (drop_work) {
      for (auto& queue : queues_) queue.clear();
    }
  }
  changed_.notify_all();
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

void ServerStreams::run(std::size_t stream, const std::function<void()>& start_thread) {
  try {
    start_thread();
    while (true) {
      std::function<void()> work;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return failure_ || closing_ || !queues_[stream].empty(); });
        if (failure_ || queues_[stream].empty()) return;  // failed, or closed and done
        work = std::move(queues_[stream].front());
        queues_[stream].pop_front();
      }
      work();
    }
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failure_) failure_ = std::current_exception();
      for (auto& queue : queues_) queue.clear();
    }
    changed_.notify_all();
  }
}

}  // namespace cmlbed::train
