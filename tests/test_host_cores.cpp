// Ranks sharing a host's cores: HostCores' processor sharing on hand-worked loads, and
// the simulator's rounds with SimulationInput::host_cores.
#include <gtest/gtest.h>

#include "cmlbed/sim/schedule_simulator.hpp"
#include "sim/host_cores.hpp"

namespace cmlbed::sim {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

TEST(HostCores, WorkRunsAtFullSpeedWithoutLoad) {
  HostCores cores(2);
  EXPECT_EQ(cores.wall_ns(5 * kSecond, 1.5), kSecond + kSecond / 2);
  cores.book(0, 10 * kSecond, 2);  // two cores asked for: no slower on two cores
  cores.next_pass();
  EXPECT_EQ(cores.wall_ns(kSecond, 1.0), kSecond);
  EXPECT_EQ(cores.wall_ns(kSecond, 0.0), 0);
}

TEST(HostCores, LoadAboveTheCoresSlowsWorkDownAcrossSteps) {
  HostCores cores(2);
  cores.book(0, 4 * kSecond, 1);
  cores.book(0, 4 * kSecond, 1);
  cores.book(2 * kSecond, 4 * kSecond, 2);  // from 2 s on, 4 cores asked of 2
  cores.next_pass();
  // From 1 s: 1 s of work at full speed to 2 s, then half speed: 1 s more work takes 2 s.
  EXPECT_EQ(cores.wall_ns(kSecond, 2.0), 3 * kSecond);
  // From 3 s: 0.5 s done by 4 s at half speed, the other 0.5 s at full speed after it.
  EXPECT_EQ(cores.wall_ns(3 * kSecond, 1.0), kSecond + kSecond / 2);
  // A new pass starts empty: what was booked before next_pass is the only load.
  cores.next_pass();
  EXPECT_EQ(cores.wall_ns(3 * kSecond, 1.0), kSecond);
}

TEST(HostCores, OversubscribedWorkRedoesTheSwitchWorkEverySlice) {
  HostCores cores(1, 1'000'000);  // one core, a 1 ms slice
  cores.book(0, 10 * kSecond, 2);  // two threads' work on it until 10 s
  cores.next_pass();
  // Half the core, and every 1 ms slice costs 0.25 ms more: 1 s of work at 0.5 / 1.25.
  EXPECT_EQ(cores.wall_ns(0, 1.0, 0.25e-3), 2 * kSecond + kSecond / 2);
  EXPECT_EQ(cores.wall_ns(0, 1.0), 2 * kSecond);           // without switch work: half speed
  EXPECT_EQ(cores.wall_ns(11 * kSecond, 1.0, 0.25e-3), kSecond);  // a core to itself: no switches
  HostCores no_slice(1);
  no_slice.book(0, 10 * kSecond, 2);
  no_slice.next_pass();
  EXPECT_EQ(no_slice.wall_ns(0, 1.0, 0.25e-3), 2 * kSecond);  // no slice given: not modelled
}

// The CPU time a thread is charged: its work, and where the core is oversubscribed the
// switch work of every slice too (1 ms slices costing 0.25 ms more: 1.25 x the work).
TEST(HostCores, OversubscribedWorkIsChargedItsSwitchWork) {
  HostCores cores(1, 1'000'000);
  cores.book(0, 10 * kSecond, 2);
  cores.next_pass();
  const HostCores::SharedRun shared = cores.run(0, 1.0, 0.25e-3);
  EXPECT_EQ(shared.wall_ns, 2 * kSecond + kSecond / 2);
  EXPECT_NEAR(shared.cpu_s, 1.25, 1e-9);
  const HostCores::SharedRun alone = cores.run(11 * kSecond, 1.0, 0.25e-3);
  EXPECT_NEAR(alone.cpu_s, 1.0, 1e-9);
  // Half in the shared step (0.5 s of work by 10 s), half after it.
  EXPECT_NEAR(cores.run(10 * kSecond - kSecond * 5 / 4, 1.0, 0.25e-3).cpu_s, 0.5 * 1.25 + 0.5, 1e-6);
}

TEST(HostCores, RefusesNoCores) { EXPECT_THROW(HostCores(0), std::invalid_argument); }

TEST(HostCores, WakeUpsWaitHalfASliceEachWhereEveryCoreIsBusy) {
  HostCores cores(2, 1'000'000);  // a 1 ms slice
  EXPECT_EQ(cores.wake_latency_ns(kSecond), 0);  // nothing booked yet
  cores.book(0, 4 * kSecond, 1);
  cores.book(2 * kSecond, 6 * kSecond, 1);
  cores.next_pass();
  EXPECT_EQ(cores.wake_latency_ns(kSecond), 0);                      // one core asked for
  EXPECT_EQ(cores.wake_latency_ns(3 * kSecond), kWakeHandOvers * 500'000);  // both
  EXPECT_EQ(cores.wake_latency_ns(5 * kSecond), 0);
  HostCores unmodelled(1);
  unmodelled.book(0, kSecond, 1);
  unmodelled.next_pass();
  EXPECT_EQ(unmodelled.wake_latency_ns(kSecond / 2), 0);
  EXPECT_THROW(HostCores(1, -1), std::invalid_argument);
}

// fl, two devices with one mini-batch each: forward 1 s, backward 1 s, step 0, the model
// sent over unshaped links (no time). With cores of their own both are done at 2 s; on
// one shared core each computes at half speed, done at 4 s; on two cores, at 2 s again.
SimulationInput two_fl_devices(double slowdown) {
  SimulationInput input;
  input.method = "fl";
  input.batch_size = 1;
  for (int d = 0; d < 2; ++d) {
    SimulatedDevice device;
    device.samples = 1;
    device.part.forward_s = {0, slowdown};
    device.part.backward_s = {0, slowdown};
    device.part.forward_flops = {0, 1};
    device.part.backward_flops = {0, 2};
    device.part.stretch = slowdown;
    input.devices.push_back(device);
  }
  return input;
}

double round_s(const SimulationInput& input) {
  const auto rounds = simulate(input);
  return static_cast<double>(rounds.at(0).end_ns - rounds.at(0).start_ns) / kSecond;
}

TEST(SimulatedHostCores, RanksOnOneCoreShareIt) {
  SimulationInput input = two_fl_devices(1);
  EXPECT_DOUBLE_EQ(round_s(input), 2.0);
  input.host_cores = 1;
  EXPECT_NEAR(round_s(input), 4.0, 4.0 * 0.01);
  input.host_cores = 2;
  EXPECT_DOUBLE_EQ(round_s(input), 2.0);
}

// Stretched stages (slowdown 3: 1 s of work, then 2 s asleep) on one thread last three
// times the work's CPU time, at least its shared wall time (Timeline::Scope): on one
// core both devices' work takes 2 s, inside the 3 s stage, so the round stays 6 s; at
// slowdown 1.5 the shared 2 s outlast the stretch (1.5 s) and make the stage.
TEST(SimulatedHostCores, AStretchedStageStretchesItsWorkNotItsWaitForACore) {
  SimulationInput input = two_fl_devices(3);
  EXPECT_DOUBLE_EQ(round_s(input), 6.0);
  input.host_cores = 1;
  EXPECT_NEAR(round_s(input), 6.0, 6.0 * 0.01);
  input = two_fl_devices(1.5);
  input.host_cores = 1;
  EXPECT_NEAR(round_s(input), 4.0, 4.0 * 0.01);
}

// On several threads the runtime stretches the stage's wall time: two devices of 2
// threads each on 2 cores get half speed, 1 s of work takes 2 s, each stage 6 s.
TEST(SimulatedHostCores, AStretchedStageOnSeveralThreadsStretchesItsSharedWallTime) {
  SimulationInput input = two_fl_devices(3);
  for (SimulatedDevice& device : input.devices) device.part.threads = 2;
  input.host_cores = 2;
  EXPECT_NEAR(round_s(input), 12.0, 12.0 * 0.01);
}

// A stage whose thread slept before it does wake_s more work (stretched like the rest):
// the round's first stage and every stage after a stretched one; not a stage right
// after an unstretched one. fl at slowdown 1: only the forward (2.25 s); at slowdown 3
// the forward, the backward after its sleep and the step after the backward's, each
// 3 x 0.25 s longer (6 + 2.25 s); on one shared core too.
TEST(SimulatedHostCores, AStageAfterASleepTakesTheWakeUpsWork) {
  SimulationInput input = two_fl_devices(1);
  for (SimulatedDevice& device : input.devices) device.part.wake_s = 0.25;
  EXPECT_DOUBLE_EQ(round_s(input), 2.25);
  input = two_fl_devices(3);
  for (SimulatedDevice& device : input.devices) device.part.wake_s = 0.25;
  EXPECT_DOUBLE_EQ(round_s(input), 8.25);
  input.host_cores = 1;  // 1.25 s of work each, shared: 2.5 s, inside the 3.75 s stage
  EXPECT_NEAR(round_s(input), 8.25, 8.25 * 0.01);
}

// Where the ranks' threads (a compute and a communication thread each) outnumber the
// host's cores, other threads run on a rank's core between its stages, so every stage
// takes the wake-up's work, also one right after another: fl at slowdown 1 on 2 cores
// (3 ranks, 6 threads), 2 x 1.25 s and a step of 0.25 s; on 6 cores only the forward.
TEST(SimulatedHostCores, EveryStageTakesTheWakeUpsWorkWhereThreadsOutnumberTheCores) {
  SimulationInput input = two_fl_devices(1);
  for (SimulatedDevice& device : input.devices) device.part.wake_s = 0.25;
  input.host_cores = 2;
  EXPECT_NEAR(round_s(input), 2.75, 2.75 * 0.01);
  input.host_cores = 6;
  EXPECT_NEAR(round_s(input), 2.25, 2.25 * 0.01);
}

// Paced stages (devices.flops) last their paced length as long as the shared work fits.
TEST(SimulatedHostCores, PacedStagesKeepTheirLengthWhileTheWorkFits) {
  SimulationInput input = two_fl_devices(1);
  for (SimulatedDevice& device : input.devices) {
    device.part.stretch = 1;
    device.part.paced = true;
    device.part.forward_s = {0, 3};  // paced to 3 s, 1 s of work
    device.part.backward_s = {0, 3};
    device.part.forward_work_s = {0, 1};
    device.part.backward_work_s = {0, 1};
  }
  EXPECT_DOUBLE_EQ(round_s(input), 6.0);
  input.host_cores = 1;  // 2 s of work each per stage: still inside 3 s
  EXPECT_NEAR(round_s(input), 6.0, 6.0 * 0.01);
  for (SimulatedDevice& device : input.devices) device.part.forward_work_s = {0, 2};  // 4 s shared: longer
  EXPECT_NEAR(round_s(input), 4.0 + 3.0, 7.0 * 0.02);
}

// The simulated trace marks held stages as the runtime's does: kept while the shared work
// fits their paced length, overran once it does not (the runtime's Held).
TEST(SimulatedHostCores, HeldStagesAreMarkedKeptOrOverran) {
  SimulationInput input = two_fl_devices(1);
  for (SimulatedDevice& device : input.devices) {
    device.part.stretch = 1;
    device.part.paced = true;
    device.part.forward_s = {0, 3};
    device.part.backward_s = {0, 3};
    device.part.forward_work_s = {0, 1};
    device.part.backward_work_s = {0, 2};
  }
  input.host_cores = 1;  // forward: 2 s shared, inside 3; backward: 4 s shared, past 3
  const SimulatedRound round = simulate(input).at(0);
  int kept = 0, overran = 0, unheld = 0;
  for (const trace::Event& e : round.events[1]) {
    if (e.lane != trace::Lane::compute) continue;
    if (e.kind == trace::EventKind::forward) {
      EXPECT_EQ(e.held, trace::Held::kept);
    }
    if (e.kind == trace::EventKind::backward) {
      EXPECT_EQ(e.held, trace::Held::overran);
    }
    (e.held == trace::Held::kept ? kept : e.held == trace::Held::overran ? overran : unheld) += 1;
  }
  EXPECT_GE(kept, 1);  // the forward (and the step: paced, no work)
  EXPECT_EQ(overran, 1);
  EXPECT_EQ(unheld, 0);
  for (const trace::Event& e : round.events[0]) EXPECT_EQ(e.held, trace::Held::no);  // the server
}

// Two FL devices on one core, device 2 with four times the work (8 s against 2 s): device
// 1's model (10 MB at 100 mbit) reaches the server while device 2 still computes, so with
// a 100 ms slice 3 half-slices late; device 2's arrives on an idle core, on time.
TEST(SimulatedHostCores, AMessageArrivingWhileEveryCoreIsBusyIsSeenLater) {
  SimulationInput input = two_fl_devices(1);
  input.model_state_values = 2'500'000;  // 10 MB of float32
  input.devices[1].part.forward_s = {0, 4};
  input.devices[1].part.backward_s = {0, 4};
  for (SimulatedDevice& device : input.devices) {
    device.uplink.rate_bits_per_second = 100e6;
    device.uplink.burst_bytes = 1 << 20;
  }
  input.host_cores = 1;
  const auto arrivals = [&](std::int64_t slice_ns) {
    input.host_slice_ns = slice_ns;
    const SimulatedRound round = simulate(input).at(0);
    std::vector<std::int64_t> ends;
    for (const trace::Event& e : round.events[0]) {
      if (e.kind == trace::EventKind::recv && e.lane == trace::Lane::uplink) ends.push_back(e.t_end_ns);
    }
    return ends;
  };
  const std::vector<std::int64_t> plain = arrivals(0), sliced = arrivals(100'000'000);
  ASSERT_EQ(plain.size(), 2u);
  ASSERT_EQ(sliced.size(), 2u);
  EXPECT_NEAR(static_cast<double>(sliced[0] - plain[0]), kWakeHandOvers * 50e6, 1e6);
  EXPECT_EQ(sliced[1], plain[1]);
}

TEST(SimulatedHostCores, RefusesNegativeCores) {
  SimulationInput input = two_fl_devices(1);
  input.host_cores = -1;
  EXPECT_THROW(simulate(input), std::invalid_argument);
}

}  // namespace
}  // namespace cmlbed::sim
