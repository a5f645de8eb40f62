#pragma once
// Small helpers shared by the benchmark programs: medians, timing, CPU clocks and a
// minimal JSON writer (benchmarks print medians and write JSON; they never pass/fail).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

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

// A JSON object built field by field; values are numbers, strings, arrays or objects.
class Json {
 public:
  Json& number(const std::string& key, double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.9g", value);
    return raw(key, buffer);
  }
  Json& text(const std::string& key, const std::string& value) { return raw(key, "\"" + value + "\""); }
  Json& numbers(const std::string& key, const std::vector<double>& values) {
    std::string list = "[";
    for (std::size_t i = 0; i < values.size(); ++i) {
      char buffer[64];
      std::snprintf(buffer, sizeof buffer, "%s%.9g", i ? ", " : "", values[i]);
      list += buffer;
    }
    return raw(key, list + "]");
  }
  Json& object(const std::string& key, const Json& value) { return raw(key, value.str()); }
  Json& objects(const std::string& key, const std::vector<Json>& values) {
    std::string list = "[";
    for (std::size_t i = 0; i < values.size(); ++i) list += (i ? ",\n  " : "\n  ") + values[i].str();
    return raw(key, list + "]");
  }
  std::string str() const { return "{" + body_ + "}"; }

 private:
  Json& raw(const std::string& key, const std::string& value) {
    body_ += (body_.empty() ? "" : ", ") + ("\"" + key + "\": ") + value;
    return *this;
  }
  std::string body_;
};

inline void write_json(const std::string& path, const Json& json) {
  std::ofstream out(path);
  out << json.str() << "\n";
  if (!out) std::fprintf(stderr, "bench: cannot write %s\n", path.c_str());
}

}  // namespace cmlbed::bench
