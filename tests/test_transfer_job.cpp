// The runtime end to end: `cmlbed run --experiment.method=transfer` under mpirun writes a
// results file whose rounds, bytes, events and idle times tell the truth about the links.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "cmlbed/trace/busy_time.hpp"
#include "cmlbed/trace/results_file.hpp"

namespace cmlbed::trace {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

int run(const std::string& arguments) {
  const std::string command = env("CMLBED_MPIEXEC") + " --oversubscribe -np 3 " +
                              env("CMLBED_BINARY") + " run " + arguments + " > /dev/null";
  return WEXITSTATUS(std::system(command.c_str()));
}

class TransferJob : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(env("CMLBED_BINARY").empty()) << "CMLBED_BINARY is not set";
    path_ = ::testing::TempDir() + "cmlbed_transfer_" + std::to_string(::getpid()) + ".h5";
    std::filesystem::remove(path_);
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

TEST_F(TransferJob, RecordsEveryRoundAndTheLinksShapeIt) {
  // 2 devices each send 1 MiB over a 40 mbit uplink (burst 32 KiB) and get 1 MiB back
  // unshaped; each computes 40 ms stretched 2x by its slowdown before sending.
  ASSERT_EQ(run("--experiment.method=transfer --experiment.rounds=3 --transfer.bytes=1MiB "
                "--transfer.compute=40ms --devices.slowdown=2 --network.uplink_rate=40mbit "
                "--network.burst=32kb --output.progress=false --output.file=" + path_),
            0);
  EXPECT_EQ(ResultsFile::read_string_attribute(path_, "method"), "transfer");
  EXPECT_NE(ResultsFile::read_string_attribute(path_, "config").find("uplink_rate = 40mbit"),
            std::string::npos);

  const auto rounds = ResultsFile::read_rounds(path_);
  ASSERT_EQ(rounds.size(), 3u);
  const double link_seconds = ((1 << 20) - (32 << 10)) * 8 / 40e6;  // 0.203 s
  for (const RoundRecord& r : rounds) {
    EXPECT_EQ(r.bytes_up, 2 << 20);
    EXPECT_EQ(r.bytes_down, 2 << 20);
    EXPECT_GE(r.wall_s, 0.080 + link_seconds * 0.98);  // stretched compute, then the uplink
    ASSERT_EQ(r.busy_s.size(), 3u);
    // The server computes nothing; each device is busy its stretched 80 ms.
    EXPECT_LT(r.busy_s[0], 0.005);
    EXPECT_NEAR(r.idle_s[0], r.wall_s, 0.005);
    for (int device = 1; device <= 2; ++device) {
      EXPECT_GE(r.busy_s[static_cast<std::size_t>(device)], 0.080);
      EXPECT_LT(r.busy_s[static_cast<std::size_t>(device)], 0.5);
      EXPECT_NEAR(r.busy_s[static_cast<std::size_t>(device)] + r.idle_s[static_cast<std::size_t>(device)],
                  r.wall_s, 1e-9);
    }
    EXPECT_TRUE(std::isnan(r.test_accuracy));
  }

  for (int rank = 0; rank < 3; ++rank) {
    std::map<std::pair<int, int>, int> count;  // (lane, kind) -> events
    for (const Event& e : ResultsFile::read_events(path_, rank)) {
      EXPECT_LE(e.t_start_ns, e.t_end_ns);
      ++count[{static_cast<int>(e.lane), static_cast<int>(e.kind)}];
      if (e.kind == EventKind::send && rank != 0) {
        // The upload cannot finish sooner than the link allows.
        EXPECT_GE(static_cast<double>(e.t_end_ns - e.t_start_ns) * 1e-9, link_seconds * 0.98);
      }
    }
    const int up = static_cast<int>(Lane::uplink), down = static_cast<int>(Lane::downlink);
    const int send = static_cast<int>(EventKind::send), recv = static_cast<int>(EventKind::recv);
    if (rank == 0) {
      EXPECT_EQ((count[{up, recv}]), 6);    // 2 devices x 3 rounds
      EXPECT_EQ((count[{down, send}]), 6);
    } else {
      EXPECT_EQ((count[{up, send}]), 3);
      EXPECT_EQ((count[{down, recv}]), 3);
      EXPECT_EQ((count[{static_cast<int>(Lane::compute), static_cast<int>(EventKind::compute)}]), 3);
    }
  }
  const auto summary = ResultsFile::read_summary(path_);
  std::map<std::string, double> values(summary.begin(), summary.end());
  EXPECT_EQ(values["rounds"], 3);
  EXPECT_EQ(values["bytes_up"], 3.0 * (2 << 20));
}

TEST_F(TransferJob, AnExistingFileIsNotOverwrittenUnlessAsked) {
  const std::string args = "--experiment.method=transfer --transfer.bytes=1kb "
                           "--output.progress=false --output.file=" + path_;
  ASSERT_EQ(run(args + " --experiment.rounds=1"), 0);
  EXPECT_EQ(run(args + " --experiment.rounds=1"), 2);
  EXPECT_EQ(ResultsFile::read_rounds(path_).size(), 1u);
  EXPECT_EQ(run(args + " --output.overwrite=true --experiment.rounds=2"), 0);
  EXPECT_EQ(ResultsFile::read_rounds(path_).size(), 2u);
}

}  // namespace
}  // namespace cmlbed::trace
