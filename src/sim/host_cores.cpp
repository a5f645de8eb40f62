#include "host_cores.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cmlbed::sim {

HostCores::HostCores(int cores, std::int64_t slice_ns) : cores_(cores), slice_ns_(slice_ns) {
  if (cores < 1) throw std::invalid_argument("HostCores: need at least one core");
  if (slice_ns < 0) throw std::invalid_argument("HostCores: the slice must not be negative");
}

std::size_t HostCores::step_at(std::int64_t t) const {
  return static_cast<std::size_t>(std::upper_bound(times_.begin(), times_.end(), t) - times_.begin());
}

int HostCores::load_in(std::size_t step) const { return step == 0 ? 0 : load_[step - 1]; }

std::int64_t HostCores::wake_latency_ns(std::int64_t t) const {
  return load_in(step_at(t)) >= cores_ ? kWakeHandOvers * slice_ns_ / 2 : 0;
}

HostCores::SharedRun HostCores::run(std::int64_t start_ns, double work_s, double switch_work_s) const {
  double work_ns = work_s * 1e9;
  if (work_ns <= 0) return {};
  const double switched = slice_ns_ > 0 && switch_work_s > 0
                              ? static_cast<double>(slice_ns_) / (static_cast<double>(slice_ns_) + switch_work_s * 1e9)
                              : 1.0;
  // The step the start falls in, then step by step until the work is done.
  // Work done in an oversubscribed step costs 1 / switched of itself in CPU time.
  std::size_t i = step_at(start_ns);
  double t = static_cast<double>(start_ns);
  double cpu_ns = 0;
  while (true) {
    const int load = load_in(i);
    const bool shared = load > cores_;
    const double rate = shared ? switched * static_cast<double>(cores_) / load : 1.0;
    const double cpu_per_work = shared ? 1.0 / switched : 1.0;
    const double can_do = i == times_.size() ? work_ns : (static_cast<double>(times_[i]) - t) * rate;
    if (can_do >= work_ns) {
      t += work_ns / rate;
      cpu_ns += work_ns * cpu_per_work;
      break;
    }
    work_ns -= can_do;
    cpu_ns += can_do * cpu_per_work;
    t = static_cast<double>(times_[i]);
    ++i;
  }
  return {static_cast<std::int64_t>(std::llround(t)) - start_ns, cpu_ns / 1e9};
}

void HostCores::book(std::int64_t start_ns, std::int64_t end_ns, int threads) {
  if (end_ns <= start_ns || threads < 1) return;
  booked_wall_ns_ += static_cast<double>(end_ns - start_ns);
  booked_.emplace_back(start_ns, threads);
  booked_.emplace_back(end_ns, -threads);
}

void HostCores::next_pass() {
  std::sort(booked_.begin(), booked_.end());
  times_.clear();
  load_.clear();
  int load = 0;
  for (const auto& [time, change] : booked_) {
    load += change;
    if (!times_.empty() && times_.back() == time) {
      load_.back() = load;
    } else {
      times_.push_back(time);
      load_.push_back(load);
    }
  }
  booked_.clear();
  previous_wall_ns_ = booked_wall_ns_;
  booked_wall_ns_ = 0;
}

bool HostCores::settled(double tolerance) const {
  return previous_wall_ns_ >= 0 && std::abs(booked_wall_ns_ - previous_wall_ns_) <= tolerance * previous_wall_ns_;
}

}  // namespace cmlbed::sim
