#pragma once
// Small helpers shared by the benchmark programs: medians, timing, CPU clocks and a
// JSON builder (benchmarks print medians and write JSON; they never pass/fail).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace cmlbed::bench {

inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

inline double cpu_seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}
inline double process_cpu_seconds() { return cpu_seconds(CLOCK_PROCESS_CPUTIME_ID); }
inline double thread_cpu_seconds() { return cpu_seconds(CLOCK_THREAD_CPUTIME_ID); }

// A JSON object built field by field (numbers, strings, arrays, objects), in the order
// given; nlohmann::json escapes the strings and writes non-finite numbers as null.
class Json {
 public:
  Json& number(const std::string& key, double value) { return set(key, value); }
  Json& text(const std::string& key, const std::string& value) { return set(key, value); }
  Json& numbers(const std::string& key, const std::vector<double>& values) { return set(key, values); }
  Json& object(const std::string& key, const Json& value) { return set(key, value.value_); }
  Json& objects(const std::string& key, const std::vector<Json>& values) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const Json& value : values) list.push_back(value.value_);
    return set(key, std::move(list));
  }
  std::string str() const { return value_.dump(2); }

 private:
  template <typename Value>
  Json& set(const std::string& key, Value&& value) {
    value_[key] = std::forward<Value>(value);
    return *this;
  }
  nlohmann::ordered_json value_ = nlohmann::ordered_json::object();
};

inline void write_json(const std::string& path, const Json& json) {
  std::ofstream out(path);
  out << json.str() << "\n";
  if (!out) std::fprintf(stderr, "bench: cannot write %s\n", path.c_str());
}

}  // namespace cmlbed::bench
