// Start-up figures: the phases of a rank's start-up add up to its total, a skipped
// phase takes no time, CPU time is counted per phase, and /proc gives this process's
// start and memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <numeric>
#include <thread>
#include <vector>

#include "cmlbed/trace/process_stats.hpp"
#include "cmlbed/trace/startup_clock.hpp"

namespace cmlbed::trace {
namespace {

void spin_for(std::chrono::milliseconds duration) {
  const auto until = std::chrono::steady_clock::now() + duration;
  volatile std::uint64_t sink = 0;
  while (std::chrono::steady_clock::now() < until) sink = sink + 1;
}

TEST(ProcessStats, StartIsInThePastAndMemoryIsResident) {
  const auto start = process_start_ns();
  ASSERT_TRUE(start.has_value());
  EXPECT_LE(*start, boottime_now_ns());
  EXPECT_GT(*start, 0);
  const MemoryUse memory = memory_use();
  EXPECT_GT(memory.rss_bytes, 1 << 20);
  EXPECT_GE(memory.peak_rss_bytes, memory.rss_bytes);
  // Shared pages count in part only, never more than in full.
  EXPECT_GT(memory.pss_bytes, 0);
  EXPECT_LE(memory.pss_bytes, memory.rss_bytes + (1 << 20));
}

TEST(ProcessStats, PeakGrowsWithTouchedMemory) {
  const std::int64_t before = memory_use().peak_rss_bytes;
  std::vector<char> block(std::size_t{64} << 20, 1);  // written, so resident
  const std::int64_t after = memory_use().peak_rss_bytes;
  EXPECT_GE(after - before, (std::int64_t{64} << 20) / 2) << static_cast<int>(block[12345]);
}

TEST(StartupClock, PhasesAddUpToTheTotalAndSkippedOnesTakeNoTime) {
  StartupClock clock;
  clock.end(StartupPhase::load);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  clock.end(StartupPhase::config);  // mpi_init skipped: it ended with load
  spin_for(std::chrono::milliseconds(60));
  clock.end(StartupPhase::clocks);  // libtorch, data, model skipped
  const std::vector<double> wall = clock.phase_seconds();
  const std::vector<double> cpu = clock.phase_cpu_seconds();
  ASSERT_EQ(wall.size(), kStartupPhaseCount);
  ASSERT_EQ(cpu.size(), kStartupPhaseCount);
  for (StartupPhase skipped : {StartupPhase::mpi_init, StartupPhase::libtorch, StartupPhase::data,
                               StartupPhase::model, StartupPhase::results_file, StartupPhase::transport}) {
    EXPECT_EQ(wall[static_cast<std::size_t>(skipped)], 0.0) << startup_phase_name(skipped);
    EXPECT_EQ(cpu[static_cast<std::size_t>(skipped)], 0.0) << startup_phase_name(skipped);
  }
  EXPECT_GE(wall[static_cast<std::size_t>(StartupPhase::config)], 0.025);
  EXPECT_GE(wall[static_cast<std::size_t>(StartupPhase::clocks)], 0.055);
  // Sleeping costs no CPU, spinning does (at least part of it, on a loaded machine).
  EXPECT_LT(cpu[static_cast<std::size_t>(StartupPhase::config)], 0.02);
  EXPECT_GT(cpu[static_cast<std::size_t>(StartupPhase::clocks)], 0.005);
  EXPECT_NEAR(std::accumulate(wall.begin(), wall.end(), 0.0), clock.total_seconds(), 1e-9);
}

// A second run in the same process (--repeats) counts its start-up from its own start:
// neither the first run's time nor its CPU, and the process's load, MPI and configuration
// phases count 0 for it.
TEST(StartupClock, RestartCountsFromTheRepeatsOwnStart) {
  StartupClock clock;
  clock.end(StartupPhase::config);
  spin_for(std::chrono::milliseconds(80));  // the first repeat's run
  clock.end(StartupPhase::transport);
  clock.restart();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  clock.end(StartupPhase::data);
  clock.end(StartupPhase::transport);
  const std::vector<double> wall = clock.phase_seconds();
  const std::vector<double> cpu = clock.phase_cpu_seconds();
  for (StartupPhase before : {StartupPhase::load, StartupPhase::mpi_init, StartupPhase::config}) {
    EXPECT_EQ(wall[static_cast<std::size_t>(before)], 0.0) << startup_phase_name(before);
  }
  EXPECT_GE(wall[static_cast<std::size_t>(StartupPhase::data)], 0.015);
  EXPECT_LT(clock.total_seconds(), 0.07);  // not the 80 ms the first run spun
  EXPECT_LT(std::accumulate(cpu.begin(), cpu.end(), 0.0), 0.05);
}

TEST(StartupClock, NamesAreDistinct) {
  std::vector<std::string> names;
  for (std::size_t phase = 0; phase < kStartupPhaseCount; ++phase) {
    names.push_back(startup_phase_name(static_cast<StartupPhase>(phase)));
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::unique(names.begin(), names.end()), names.end());
  EXPECT_EQ(names.front(), "clocks");
}

}  // namespace
}  // namespace cmlbed::trace
