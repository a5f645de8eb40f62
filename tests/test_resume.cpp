// `cmlbed run --resume` under mpirun, checked through the results files:
//  - a run stopped by SIGTERM and resumed ends with the weights of the same run never
//    stopped, bit for bit, for fl, sfl, pipar, sfl2, sl, psl, localloss, ushaped and
//    adasplit, and sfl and sl with
//    train.personalised; its /rounds rows before the cut are the ones the stopped run
//    wrote, each round is there once, and every round's loss, accuracy, bytes, messages
//    and FLOPs equal the uninterrupted run's;
//  - rows written after the last checkpoint are dropped and run again; without any
//    checkpoint a resumed run starts over in the same file;
//  - a finished run goes on with more rounds, and resuming a finished run changes nothing;
//  - rate traces go on where they were (device 1's uploads, not the rounds' times);
//  - what cannot be continued is refused with exit status 2 and one line.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "cmlbed/base/seed_streams.hpp"
#include "cmlbed/trace/hdf5_handles.hpp"
#include "cmlbed/trace/results_file.hpp"

namespace cmlbed::trace {
namespace {

namespace fs = std::filesystem;

// A small problem (as in test_methods) of 5 rounds. The runs that get stopped have paced
// devices (rounds of about 0.9 s on any machine, so that SIGTERM lands in the middle of
// a run; a devices.slowdown shrinks with the machine's speed: at 30x, sfl's rounds took
// 0.3 s on a fast one and the run ended before the signal came); pacing stretches time,
// not arithmetic, so the references run at full speed.
const std::vector<std::string> kBase = {
    "--data.dataset=synthetic", "--data.synthetic_train=1200", "--data.synthetic_test=300",
    "--model.name=lenet",       "--model.split=2",             "--train.batch_size=16",
    "--train.lr=0.05",          "--train.local_iterations=6",  "--experiment.rounds=5"};

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string quote(const std::string& text) { return "'" + text + "'"; }

// devices.flops for rounds of about 0.9 s of `method` on kBase (a stage lasts its FLOPs /
// the rate; fl trains the whole model on the device, sl one device at a time).
std::string paced(const std::string& method) {
  static const std::map<std::string, std::string> mflops = {
      {"fl", "160"},        {"sfl", "40"},      {"pipar", "40"},     {"sfl2", "40"},    {"psl", "40"},
      {"sl", "80"},         {"localloss", "130"}, {"ushaped", "40"}, {"adasplit", "130"}};
  return "--devices.flops=" + mflops.at(method) + "MFLOP/s";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Outcome {
  int status = -1;  // exit status, or 128 + signal
  std::string out, err;
};

class Resume : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    std::string pattern = ::testing::TempDir() + "cmlbed_resume_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  static void TearDownTestSuite() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  void SetUp() override { ASSERT_FALSE(env("CMLBED_BINARY").empty()) << "CMLBED_BINARY is not set"; }

  static std::string file(const std::string& name) { return (dir_ / (name + ".h5")).string(); }

  // mpirun -np RANKS cmlbed run ARGS..., stdout and stderr into files named after `log`.
  static std::string command(int ranks, const std::vector<std::string>& args, const std::string& log) {
    std::string line = "exec " + env("CMLBED_MPIEXEC") + " --oversubscribe -np " + std::to_string(ranks) + " " +
                       env("CMLBED_BINARY") + " run";
    for (const auto& arg : args) line += " " + quote(arg);
    return line + " >" + quote((dir_ / (log + ".out")).string()) + " 2>" + quote((dir_ / (log + ".err")).string());
  }

  static Outcome finish(pid_t pid, const std::string& log) {
    int status = 0;
    Outcome outcome;
    if (::waitpid(pid, &status, 0) == pid) {
      outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    outcome.out = slurp((dir_ / (log + ".out")).string());
    outcome.err = slurp((dir_ / (log + ".err")).string());
    return outcome;
  }

  static pid_t start(int ranks, const std::vector<std::string>& args, const std::string& log) {
    const std::string line = command(ranks, args, log);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    return pid;
  }

  static Outcome run(int ranks, const std::vector<std::string>& args, const std::string& log) {
    return finish(start(ranks, args, log), log);
  }

  // Starts the run and sends SIGTERM to mpirun (as Slurm or scancel would) once its
  // stdout shows `line`.
  static Outcome run_and_stop(int ranks, const std::vector<std::string>& args, const std::string& log,
                              const std::string& line) {
    const pid_t pid = start(ranks, args, log);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    while (slurp((dir_ / (log + ".out")).string()).find(line) == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid, SIGTERM);
    return finish(pid, log);
  }

  // kBase with `method`, overridden by `extra` (an option given twice is an error).
  static std::vector<std::string> options(const std::string& method, const std::vector<std::string>& extra) {
    const auto key = [](const std::string& option) { return option.substr(0, option.find('=')); };
    std::vector<std::string> all;
    for (const auto& option : kBase) {
      if (std::none_of(extra.begin(), extra.end(), [&](const std::string& e) { return key(e) == key(option); })) {
        all.push_back(option);
      }
    }
    all.push_back("--experiment.method=" + method);
    if (method == "adasplit") {  // 2 devices; the cut after round 2 falls in the global phase
      all.push_back("--adasplit.selected=1");
      all.push_back("--adasplit.local_fraction=0.4");
    }
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
  }

  // The uninterrupted run of `method` (5 rounds unless said) with the options `variant`,
  // once per method, rounds and variant.
  static const std::string& reference(const std::string& method, int rounds = 5,
                                      const std::vector<std::string>& variant = {}) {
    static std::map<std::string, std::string> done;
    std::string name = "reference_" + method + "_" + std::to_string(rounds);
    for (const auto& option : variant) {
      name += "_";
      for (const char c : option) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    }
    auto found = done.find(name);
    if (found != done.end()) return found->second;
    const std::string path = file(name);
    std::vector<std::string> extra = {"--experiment.rounds=" + std::to_string(rounds), "--output.file=" + path};
    extra.insert(extra.end(), variant.begin(), variant.end());
    const Outcome outcome = run(3, options(method, extra), name);
    EXPECT_EQ(outcome.status, 0) << outcome.err;
    return done[name] = path;
  }

  static fs::path dir_;
};

fs::path Resume::dir_;

bool same_value(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// Every column, bit for bit (the rows a resumed run keeps).
void expect_same_row(const RoundRecord& a, const RoundRecord& b) {
  EXPECT_EQ(a.round, b.round);
  EXPECT_EQ(a.t_start_ns, b.t_start_ns) << "round " << a.round;
  EXPECT_EQ(a.t_end_ns, b.t_end_ns) << "round " << a.round;
  EXPECT_TRUE(same_value(a.wall_s, b.wall_s)) << "round " << a.round;
  EXPECT_EQ(a.busy_s.size(), b.busy_s.size());
  for (std::size_t r = 0; r < std::min(a.busy_s.size(), b.busy_s.size()); ++r) {
    EXPECT_TRUE(same_value(a.busy_s[r], b.busy_s[r])) << "round " << a.round << " rank " << r;
  }
}

// What does not depend on timing: the mathematics and the traffic.
void expect_same_outcome(const RoundRecord& a, const RoundRecord& b) {
  EXPECT_EQ(a.round, b.round);
  EXPECT_TRUE(same_value(a.test_loss, b.test_loss)) << "round " << a.round << ": " << a.test_loss << " vs " << b.test_loss;
  EXPECT_TRUE(same_value(a.test_accuracy, b.test_accuracy)) << "round " << a.round;
  EXPECT_EQ(a.bytes_up, b.bytes_up) << "round " << a.round;
  EXPECT_EQ(a.bytes_down, b.bytes_down) << "round " << a.round;
  EXPECT_EQ(a.messages_up, b.messages_up) << "round " << a.round;
  EXPECT_EQ(a.messages_down, b.messages_down) << "round " << a.round;
  EXPECT_EQ(a.flops, b.flops) << "round " << a.round;
}

int int_attribute(const std::string& path, const std::string& name) {
  const auto file = hdf5::owned<hdf5::FileHandle>(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen");
  if (!hdf5::has_attribute(file.get(), name, path)) return -1;
  std::vector<std::int32_t> values(hdf5::attribute_elements(file.get(), name, path));
  hdf5::read_attribute(file.get(), name, H5T_NATIVE_INT32, values.data(), values.size(), path);
  return values.back();
}

// Waits (at most 30 s) until no process holds the file open for writing any more.
void wait_until_unlocked(const std::string& path) {
  hdf5::silence_error_printing();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file >= 0) {
      H5Fclose(file);
      return;
    }
    hdf5::take_error_stack();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

bool has_attribute(const std::string& path, const std::string& name) {
  const auto file = hdf5::owned<hdf5::FileHandle>(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen");
  return hdf5::has_attribute(file.get(), name, path);
}

// The forward passes of each rank in each round: a round run twice into the file (or
// one missing) shows here.
std::map<std::pair<int, int>, int> forwards(const std::string& path, int ranks) {
  std::map<std::pair<int, int>, int> count;
  for (int rank = 0; rank < ranks; ++rank) {
    for (const Event& event : ResultsFile::read_events(path, rank)) {
      if (event.kind == EventKind::forward) ++count[{rank, event.round}];
    }
  }
  return count;
}

// Stops a run of `method` (`rounds` rounds) once its output shows "round K/rounds",
// resumes it and compares with the reference. `extra` goes to the stopped run, `variant`
// to it and to the reference. Returns the number of rounds the checkpoint it resumed from
// held.
int stop_resume_and_compare(const std::string& method, const std::string& name, int stop_after, int rounds,
                            const std::vector<std::string>& extra, const std::vector<std::string>& variant = {}) {
  const std::string& reference = Resume::reference(method, rounds, variant);
  const std::string path = Resume::file(name);
  const std::size_t all = static_cast<std::size_t>(rounds);
  std::vector<std::string> overrides = {paced(method), "--experiment.rounds=" + std::to_string(rounds)};
  overrides.insert(overrides.end(), variant.begin(), variant.end());
  auto args = Resume::options(method, overrides);
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("--output.file=" + path);
  const Outcome stopped = Resume::run_and_stop(
      3, args, name + "_stopped", "round " + std::to_string(stop_after) + "/" + std::to_string(rounds));
  EXPECT_NE(stopped.status, 0) << stopped.out;
  // Normally the ranks stop cleanly and rank 0 marks the file (interrupt_job tests that).
  // On a heavily loaded machine mpirun may kill them first (1 s after passing SIGTERM
  // on): the flushed rounds and the checkpoint keep the run all the same, and the resume
  // must work either way. The file is readable once the last rank is gone.
  wait_until_unlocked(path);
  const auto before = ResultsFile::read_rounds(path);
  const int checkpoint = int_attribute(path, "checkpoint_rounds");  // -1: none
  if (has_attribute(path, "interrupted")) {
    EXPECT_EQ(int_attribute(path, "rounds_complete"), static_cast<int>(before.size()));
  } else {
    std::cerr << name << ": the ranks were killed before marking the file\n" << stopped.err;
  }
  EXPECT_LT(before.size(), all) << "the run ended before SIGTERM came";

  const Outcome resumed = Resume::run(3, {"--resume", path}, name + "_resumed");
  EXPECT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("cmlbed: resuming " + path), std::string::npos) << resumed.out;

  const auto after = ResultsFile::read_rounds(path);
  const auto expected = ResultsFile::read_rounds(reference);
  EXPECT_EQ(after.size(), all);
  EXPECT_EQ(expected.size(), all);
  const int kept = std::max(checkpoint, 0);
  for (std::size_t i = 0; i < std::min(after.size(), expected.size()); ++i) {
    expect_same_outcome(after[i], expected[i]);
    if (static_cast<int>(i) < kept && i < before.size()) expect_same_row(after[i], before[i]);
  }
  for (std::size_t i = 1; i < after.size(); ++i) EXPECT_GE(after[i].t_start_ns, after[i - 1].t_end_ns);
  EXPECT_EQ(forwards(path, 3), forwards(reference, 3));
  // AdaSplit keeps its shared server part and each device's masks (the orchestrator's
  // picks show in them too); localloss the averaged device part and head and the server
  // part; personalised runs (psl always) each device's part and server
  // part; the others one whole model.
  const bool personalised =
      method == "psl" || std::find(variant.begin(), variant.end(), "--train.personalised=true") != variant.end();
  const std::vector<std::string> models =
      method == "adasplit"    ? std::vector<std::string>{"server", "masks_1", "masks_2"}
      : method == "localloss" ? std::vector<std::string>{"device", "head", "server"}
      : personalised       ? std::vector<std::string>{"device_1", "device_2", "server_1", "server_2"}
                           : std::vector<std::string>{"model"};
  for (const std::string& model : models) {
    EXPECT_EQ(ResultsFile::read_model(path, model), ResultsFile::read_model(reference, model))
        << method << " " << model << ": not bit for bit";
  }
  EXPECT_FALSE(has_attribute(path, "interrupted"));
  EXPECT_EQ(int_attribute(path, "resumed_after_rounds"), kept);
  EXPECT_EQ(int_attribute(path, "checkpoint_rounds"), rounds);
  return kept;
}

TEST_F(Resume, StoppedAndResumedEndsWithTheUninterruptedWeights) {
  for (const char* method : {"fl", "sfl", "pipar", "sfl2", "sl", "psl", "localloss", "ushaped", "adasplit"}) {
    SCOPED_TRACE(method);
    const int kept = stop_resume_and_compare(method, std::string("stopped_") + method, 2, 5, {});
    EXPECT_GE(kept, 2) << "every round is checkpointed by default";
  }
}

// train.personalised: each device's own part and optimizer (never replaced, so never
// renewed: Adam's moments carry on through the stop) and the server's replicas.
TEST_F(Resume, PersonalisedPartsGoOnWhereTheyWere) {
  for (const char* method : {"sfl", "sl"}) {
    SCOPED_TRACE(method);
    const int kept = stop_resume_and_compare(method, std::string("stopped_personal_") + method, 2, 5, {},
                                             {"--train.personalised=true", "--train.optimizer=adam", "--train.lr=0.002"});
    EXPECT_GE(kept, 2);
  }
}

TEST_F(Resume, RoundsAfterTheLastCheckpointAreRunAgain) {
  // Checkpoints after rounds 3, 6 and 8: stopped in round 5 (or before it), the file
  // holds 4 rounds and the checkpoint 3 (4 if the stop came at the boundary, where the
  // state is saved as the run ends).
  const int kept = stop_resume_and_compare("pipar", "every3", 4, 8, {"--output.checkpoint=3"});
  EXPECT_GE(kept, 3);
  EXPECT_LE(kept, 5);
}

TEST_F(Resume, WithoutACheckpointTheRunStartsOver) {
  const std::string path = file("no_checkpoint");
  const Outcome stopped = run_and_stop(
      3, options("fl", {paced("fl"), "--output.checkpoint=0", "--output.file=" + path}), "no_checkpoint",
      "round 2/5");
  wait_until_unlocked(path);
  if (has_attribute(path, "interrupted")) {
    EXPECT_NE(stopped.err.find("starts it over"), std::string::npos) << stopped.err;
  }
  EXPECT_FALSE(fs::exists(path + ".ckpt"));
  const Outcome resumed = run(3, {"--resume", path}, "no_checkpoint_resumed");
  EXPECT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("from its start"), std::string::npos) << resumed.out;
  const auto rounds = ResultsFile::read_rounds(path);
  ASSERT_EQ(rounds.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(rounds[static_cast<std::size_t>(i)].round, i);
  EXPECT_EQ(forwards(path, 3), forwards(reference("fl"), 3));
  EXPECT_EQ(ResultsFile::read_model(path, "model"), ResultsFile::read_model(reference("fl"), "model"));
  EXPECT_EQ(int_attribute(path, "resumed_after_rounds"), 0);
}

TEST_F(Resume, AFinishedRunGoesOnWithMoreRounds) {
  const std::string path = file("extended");
  ASSERT_EQ(run(3, options("sfl", {"--experiment.rounds=3", "--output.file=" + path}), "extended").status, 0);
  const auto first = ResultsFile::read_rounds(path);
  const Outcome more = run(3, {"--resume", path, "--experiment.rounds=5", "--output.progress=false"}, "extended_more");
  ASSERT_EQ(more.status, 0) << more.err;
  const auto rounds = ResultsFile::read_rounds(path);
  ASSERT_EQ(rounds.size(), 5u);
  for (std::size_t i = 0; i < first.size(); ++i) expect_same_row(rounds[i], first[i]);
  const auto weights = ResultsFile::read_model(path, "model");
  EXPECT_EQ(weights, ResultsFile::read_model(reference("sfl"), "model"));
  EXPECT_NE(ResultsFile::read_string_attribute(path, "config").find("rounds = 5"), std::string::npos);

  // Nothing left to run: the file stays as it is (the weights are written again).
  const Outcome again = run(3, {"--resume", path}, "extended_again");
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.out.find("after round 5 of 5"), std::string::npos) << again.out;
  EXPECT_EQ(ResultsFile::read_rounds(path).size(), 5u);
  EXPECT_EQ(ResultsFile::read_model(path, "model"), weights);
}

// A stop that comes while a round is being scored leaves that round in the file
// unscored (NaN) and checkpointed (tests/interrupt_job.sh makes such stops; their timing
// is the machine's). Made here by hand: a finished run's last round unscored, then
// resumed for one more round. The resumed run scores it first, as the uninterrupted
// run did (bit for bit), and the next round matches the reference, traffic included.
TEST_F(Resume, ARoundStoppedDuringItsScoringIsScoredWhenResumed) {
  const std::string path = file("unscored");
  ASSERT_EQ(run(3, options("sfl", {"--experiment.rounds=3", "--output.file=" + path}), "unscored").status, 0);
  const auto scored = ResultsFile::read_rounds(path);
  ASSERT_EQ(scored.size(), 3u);
  ASSERT_FALSE(std::isnan(scored.back().test_loss));
  {
    trace::RowCounts keep;
    keep.rounds = scored.size();
    for (int rank = 0; rank < 3; ++rank) keep.events.push_back(ResultsFile::read_events(path, rank).size());
    ResultsFile results = ResultsFile::reopen(path, keep, 3, ResultsFile::read_string_attribute(path, "config"));
    trace::RoundRecord unscored = scored.back();
    unscored.test_loss = unscored.test_accuracy = std::nan("");
    results.replace_last_round(unscored);
    results.close();
  }
  ASSERT_TRUE(std::isnan(ResultsFile::read_rounds(path).back().test_loss));
  const Outcome resumed = run(3, {"--resume", path, "--experiment.rounds=4"}, "unscored_resumed");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("round 3 was stopped during its evaluation; scored now"), std::string::npos)
      << resumed.out;
  const auto rounds = ResultsFile::read_rounds(path);
  ASSERT_EQ(rounds.size(), 4u);
  for (std::size_t i = 0; i < scored.size(); ++i) {
    expect_same_outcome(rounds[i], scored[i]);
    expect_same_row(rounds[i], scored[i]);
  }
  expect_same_outcome(rounds[3], ResultsFile::read_rounds(reference("sfl"))[3]);
}

// The links go on from where they were: a rate trace that is slow for the first 5 s and
// fast after does not start over when a run stopped after them is resumed. (270 kB up a
// round: 2.2 s at 1 mbit, so at most 2 rounds end within the first 5 s and the 4th after
// them; 20 ms at 100 mbit. Were the trace to start over, the first resumed round would
// take 2.2 s again.)
TEST_F(Resume, RateTracesGoOnWhereTheyWere) {
  const std::string trace = (dir_ / "trace.csv").string();
  std::ofstream(trace) << "0,1mbit\n5,100mbit\n";
  const std::string path = file("trace");
  run_and_stop(3, options("sfl", {"--experiment.rounds=200", "--network.uplink_trace=" + trace, "--output.file=" + path}),
               "trace", "round 4/200");
  wait_until_unlocked(path);
  const auto before = ResultsFile::read_rounds(path);
  ASSERT_GE(before.size(), 4u);
  ASSERT_LT(before.size(), 200u);
  const Outcome resumed =
      run(3, {"--resume", path, "--experiment.rounds=" + std::to_string(before.size() + 1)}, "trace_resumed");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  const auto after = ResultsFile::read_rounds(path);
  ASSERT_EQ(after.size(), before.size() + 1);
  EXPECT_GT(after.front().wall_s, 1.5);  // the slow start of the trace
  // The slow rate costs a round about 2.2 s of link time, which the resumed round must not
  // pay again. Compared on device 1's uploads alone: round times also hold compute, which
  // a sanitizer build on a busy machine stretches unevenly (a resumed round of 1.32 s
  // against a first of 2.52 s failed a bound on their difference).
  const auto upload_s = [&](int round) {
    double seconds = 0;
    for (const trace::Event& e : ResultsFile::read_events(path, 1)) {
      if (e.round == round && e.kind == trace::EventKind::send) seconds += static_cast<double>(e.t_end_ns - e.t_start_ns) / 1e9;
    }
    return seconds;
  };
  const double first = upload_s(0), resumed_round = upload_s(static_cast<int>(before.size()));
  EXPECT_GT(first, 1.0);
  EXPECT_LT(resumed_round, 0.25 * first) << "the resumed round ran at the trace's first rate again";
}

TEST_F(Resume, RefusesWhatItCannotContinue) {
  const std::string path = file("refusals");
  ASSERT_EQ(run(3, options("fl", {"--experiment.rounds=2", "--output.file=" + path}), "refusals").status, 0);
  const auto refused = [&](int ranks, const std::vector<std::string>& args, const std::string& message) {
    const Outcome outcome = run(ranks, args, "refused");
    EXPECT_EQ(outcome.status, 2) << outcome.err;
    EXPECT_NE(outcome.err.find(message), std::string::npos) << "want '" << message << "' in:\n" << outcome.err;
    std::istringstream lines(outcome.err);
    int errors = 0;
    for (std::string line; std::getline(lines, line);) errors += line.rfind("cmlbed: error", 0) == 0 ? 1 : 0;
    EXPECT_EQ(errors, 1) << outcome.err;
  };
  refused(2, {"--resume", path}, "resume it with mpirun -np 3 (this run has 2)");
  refused(3, {"--resume", path, "--train.lr=0.1"}, "--train.lr=0.1 would change the configuration stored in");
  refused(3, {"--resume", path, "--device.1.slowdown=2"}, "--device.1.slowdown=2 would change");
  refused(3, {"--resume", path, "--config", "configs/example.ini"}, "drop --config");
  refused(3, {"--resume", path, "--output.file=" + file("elsewhere")}, "drop --output.file");
  refused(3, {"--resume", path, "--experiment.rounds=1"}, "its checkpoint is after round 2");
  refused(3, {"--resume", file("missing")}, "not a cmlbed results file that can be continued");
  refused(3, {"--resume", path, "--dry-run"}, "cannot be combined with --dry-run");
  refused(3, {"--resume", path, "--output.timeline=false"}, "--output.timeline=false would change");
  // Averaged after its round 2 only because it was the last: a run of 3 rounds with
  // train.aggregate_every = 3 would not have, so it cannot be that run's first 2 rounds.
  const std::string last_averaged = file("last_averaged");
  const Outcome short_run = run(
      3, options("fl", {"--experiment.rounds=2", "--train.aggregate_every=3", "--output.file=" + last_averaged}),
      "last_averaged");
  ASSERT_EQ(short_run.status, 0) << short_run.err;
  refused(3, {"--resume", last_averaged, "--experiment.rounds=3"}, "its round 2 ran with an average after it");
  const std::string transfer = file("transfer");
  ASSERT_EQ(run(3, {"--experiment.method=transfer", "--experiment.rounds=1", "--output.file=" + transfer}, "transfer")
                .status,
            0);
  refused(3, {"--resume", transfer}, "method transfer does not save checkpoints");
  // A checkpoint written before the one seed rule (no seed_rule attribute): its remaining
  // rounds would draw other streams than its first ones did.
  const std::string old_rule = file("old_rule");
  fs::copy_file(path, old_rule, fs::copy_options::overwrite_existing);
  fs::copy_file(path + ".ckpt", old_rule + ".ckpt", fs::copy_options::overwrite_existing);
  EXPECT_EQ(int_attribute(old_rule + ".ckpt", "seed_rule"), kSeedRule);
  {
    const auto checkpoint = hdf5::owned<hdf5::FileHandle>(
        H5Fopen((old_rule + ".ckpt").c_str(), H5F_ACC_RDWR, H5P_DEFAULT), "H5Fopen");
    ASSERT_GE(H5Adelete(checkpoint.get(), "seed_rule"), 0);
  }
  refused(3, {"--resume", old_rule, "--experiment.rounds=3"}, "by seed rule 1, this one by rule 2");
  // A stored value repeated, and the options a resumed run may change, are accepted.
  const Outcome accepted = run(3, {"--resume", path, "--train.lr=0.05", "--output.file=" + path,
                                   "--experiment.timeout=60s", "--output.progress=false"}, "accepted");
  EXPECT_EQ(accepted.status, 0) << accepted.err;
}

}  // namespace
}  // namespace cmlbed::trace
