// The schedule simulator on cases worked out by hand, stage lengths in whole seconds:
// adasplit rounds (unshaped links, the words down take 0.5 s, two devices with two
// mini-batches each), server compute streams, and plans adopted between rounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "cmlbed/sim/round_rules.hpp"
#include "cmlbed/sim/schedule_simulator.hpp"

namespace cmlbed::sim {
namespace {

using trace::Event;
using trace::EventKind;
using trace::Lane;
using trace::MessageType;

constexpr std::int64_t kSecond = 1'000'000'000;

SimulatedPart part(double forward_s, double backward_s, double step_s) {
  SimulatedPart p;
  p.forward_s = {0, 0, forward_s};  // at 0, 1, 2 samples: the batch has 2
  p.backward_s = {0, 0, backward_s};
  p.step_s = step_s;
  p.forward_flops = {0, 10, 20};
  p.backward_flops = {0, 20, 40};
  p.step_flops = 5;
  return p;
}

// Two devices with one mini-batch of 2 samples each: their part 1 s forward, backward
// and step, the server's 2 + 2 + 1 s, activations of 100 bytes a sample, unshaped links.
SimulationInput two_devices(const std::string& method, int rounds) {
  SimulationInput input;
  input.method = method;
  input.batch_size = 2;
  input.rounds = rounds;
  for (int d = 0; d < 2; ++d) {
    SimulatedDevice device;
    device.samples = 2;
    device.part = part(1, 1, 1);
    device.server = part(2, 2, 1);
    device.activation_bytes_per_sample = 100;
    input.devices.push_back(device);
  }
  return input;
}

// Devices: 1 s forward, 1 s backward, 1 s step; the server 2 + 2 + 1 s per picked batch.
SimulationInput adasplit_input(int rounds, int local_rounds, std::vector<std::vector<std::vector<int>>> chosen) {
  SimulationInput input;
  input.method = "adasplit";
  input.batch_size = 2;
  input.rounds = rounds;
  input.adasplit.local_rounds = local_rounds;
  input.adasplit.chosen = std::move(chosen);
  for (int d = 0; d < 2; ++d) {
    SimulatedDevice device;
    device.batches = 2;
    device.samples = 4;
    device.downlink.delay_ns = kSecond / 2;
    device.part = part(1, 1, 1);
    device.server = part(2, 2, 1);
    device.activation_bytes_per_sample = 100;
    input.devices.push_back(device);
  }
  return input;
}

std::vector<Event> of_kind(const std::vector<Event>& events, EventKind kind, Lane lane = Lane::compute) {
  std::vector<Event> found;
  std::copy_if(events.begin(), events.end(), std::back_inserter(found),
               [&](const Event& e) { return e.kind == kind && e.lane == lane; });
  return found;
}

TEST(AdaSplitSchedule, DevicesWaitForTheServersWordAndTheServerTakesUploadsInDeviceOrder) {
  // Mini-batch 0: both devices picked; 1: device 2 only.
  const auto rounds = simulate(adasplit_input(1, 0, {{{1, 2}, {2}}}));
  ASSERT_EQ(rounds.size(), 1u);
  const SimulatedRound& r = rounds[0];
  // Words for 0 arrive at 0.5; both devices step at 3 and upload. The server trains
  // device 1's batch 3..8, device 2's 8..13; the words for 1 leave at 13 and arrive at
  // 13.5, long after the devices stepped (6): they wait. Device 2's upload at 13.5 is
  // trained 13.5..18.5.
  EXPECT_EQ(r.end_ns, 18 * kSecond + kSecond / 2);
  const auto server_forwards = of_kind(r.events[0], EventKind::forward);
  ASSERT_EQ(server_forwards.size(), 3u);
  EXPECT_EQ(server_forwards[0].t_start_ns, 3 * kSecond);
  EXPECT_EQ(server_forwards[1].t_start_ns, 8 * kSecond);
  EXPECT_EQ(server_forwards[2].t_start_ns, 13 * kSecond + kSecond / 2);
  EXPECT_EQ(server_forwards[2].batch, 1);
  for (int d = 1; d <= 2; ++d) {
    const auto forwards = of_kind(r.events[static_cast<std::size_t>(d)], EventKind::forward);
    ASSERT_EQ(forwards.size(), 2u);
    EXPECT_EQ(forwards[1].t_start_ns, 3 * kSecond) << "device " << d << " waited for the word of batch 0 at 0.5 s";
    const auto words = of_kind(r.events[static_cast<std::size_t>(d)], EventKind::recv, Lane::downlink);
    ASSERT_EQ(words.size(), 2u);
    EXPECT_EQ(words[1].t_end_ns, 13 * kSecond + kSecond / 2);
    EXPECT_EQ(words[1].bytes, 1);
  }
  EXPECT_EQ(of_kind(r.events[1], EventKind::send, Lane::uplink).size(), 1u);
  EXPECT_EQ(of_kind(r.events[2], EventKind::send, Lane::uplink).size(), 2u);
  EXPECT_EQ(of_kind(r.events[2], EventKind::send, Lane::uplink)[0].bytes, 2 * (100 + 8));  // + int64 labels
  EXPECT_DOUBLE_EQ(r.flops[0], 3 * (20 + 40 + 5));
  EXPECT_DOUBLE_EQ(r.flops[1], 2 * (20 + 40 + 5));
}

TEST(AdaSplitSchedule, LocalRoundsSendNothingAndShiftTheGlobalOnes) {
  const auto rounds = simulate(adasplit_input(2, 1, {{{1, 2}, {2}}}));
  ASSERT_EQ(rounds.size(), 2u);
  EXPECT_EQ(rounds[0].end_ns, 6 * kSecond);  // two batches of 3 s, the devices side by side
  for (const auto& events : rounds[0].events) {
    for (const Event& e : events) EXPECT_EQ(e.lane, Lane::compute);
  }
  EXPECT_TRUE(rounds[0].events[0].empty()) << "the server idles in a local round";
  EXPECT_EQ(rounds[1].end_ns, rounds[0].end_ns + 18 * kSecond + kSecond / 2);
}

TEST(AdaSplitSchedule, RefusesPicksThatDoNotFit) {
  EXPECT_THROW(simulate(adasplit_input(2, 0, {{{1}, {2}}})), std::invalid_argument);  // round 2 has none
  EXPECT_THROW(simulate(adasplit_input(1, 0, {{{3}, {2}}})), std::invalid_argument);  // no device 3
  EXPECT_THROW(simulate(adasplit_input(1, 0, {{{1}}})), std::invalid_argument);       // no picks for batch 1
}


// sfl, two devices with one mini-batch of 2 each (forward, backward, step 1 s; the
// server's part 2 + 2 + 1 s), unshaped links. Both activations arrive at 1 s. One
// stream serves device 1 in 1-6 s and device 2 in 6-11 s, so device 2 steps at 12 s;
// two streams serve both in 1-6 s, and every device is done at 7 s.
// The receiver of a shaped message of several chunks looks for its last chunks every half
// chunk interval, at most every 1 ms (net/chunk_pacing.hpp): seen half a look late on
// average. sfl, device 1's activation (2 x (1000 + 8) bytes) on a 1 mbit/s link of
// 256-byte chunks: 8 payload chunks, 2.048 ms apart, looked for every 1 ms: 0.5 ms late;
// device 2's in one chunk is seen when it arrives (nothing paces it).
TEST(SimulatedLinks, AShapedMessageOfSeveralChunksIsSeenHalfALookLate) {
  SimulationInput input = two_devices("sfl", 1);
  for (SimulatedDevice& device : input.devices) {
    device.activation_bytes_per_sample = 1000;
    device.uplink.rate_bits_per_second = 1e6;
  }
  input.devices[0].uplink.burst_bytes = 256;
  input.devices[1].uplink.burst_bytes = 1 << 20;
  const SimulatedRound r = simulate(input).at(0);
  for (const int device : {1, 2}) {
    std::int64_t sent = -1, seen = -1;
    for (const Event& e : r.events[static_cast<std::size_t>(device)]) {
      if (e.kind == EventKind::send && e.message == MessageType::activation) sent = e.t_end_ns;
    }
    for (const Event& e : r.events[0]) {
      if (e.kind == EventKind::recv && e.message == MessageType::activation && e.peer == device) seen = e.t_end_ns;
    }
    ASSERT_GE(sent, 0) << "device " << device;
    EXPECT_EQ(seen - sent, device == 1 ? 500'000 : 0) << "device " << device;
  }
}

// pipar, one server stream, unshaped links: device 1's three micro-batches (1 sample, 1 s
// forward each) arrive at 1, 2 and 3 s, device 2's one (3 samples, 3.5 s) at 3.5 s; each
// takes the server 4 s per sample and pass. The server takes device 1's first at 1 s and
// posts its next receive then; the second arrives meanwhile (2 s) and is taken at 9 s,
// which posts the receive of the third: that one counts from 9 s, after device 2's at
// 3.5 s, as in the runtime (serve_in_arrival_order keeps one receive per device).
// By the bytes' arrival alone the order would be 1, 1, 1, 2.
TEST(SimulatedArrivalOrder, ADevicesNextMicroBatchQueuesOnlyOnceTheOneBeforeIsTaken) {
  SimulationInput input;
  input.method = "pipar";
  input.batch_size = 3;
  input.rounds = 1;
  for (int d = 0; d < 2; ++d) {
    SimulatedDevice device;
    device.samples = 3;
    device.micro_batches = d == 0 ? 3 : 1;
    device.part.forward_s = {0, 1, 2, d == 0 ? 3.0 : 3.5};
    device.part.backward_s = {0, 1, 2, 3};
    device.server.forward_s = {0, 2, 4, 6};
    device.server.backward_s = {0, 2, 4, 6};
    device.server.step_s = 1;
    for (SimulatedPart* p : {&device.part, &device.server}) p->forward_flops = p->backward_flops = {0, 1, 2, 3};
    device.activation_bytes_per_sample = 100;
    input.devices.push_back(device);
  }
  const auto served_order = [](const SimulationInput& in) {
    std::vector<int> peers;
    const auto rounds = simulate(in);
    for (const Event& e : rounds.at(0).events[0]) {
      if (e.kind == EventKind::send && e.message == MessageType::gradient) peers.push_back(e.peer);
    }
    return peers;
  };
  EXPECT_EQ(served_order(input), (std::vector<int>{1, 1, 2, 1}));
}

TEST(SimulatedServerStreams, StreamsServeDevicesAtTheSameTime) {
  SimulationInput input = two_devices("sfl", 1);
  const auto one = simulate(input);
  input.server_streams = 2;
  const auto two = simulate(input);
  input.server_streams = 5;  // more streams than devices: as many as devices
  const auto five = simulate(input);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].end_ns, 12 * kSecond);
  EXPECT_EQ(two[0].end_ns, 7 * kSecond);
  EXPECT_EQ(five[0].end_ns, 7 * kSecond);
  const auto forwards_one = of_kind(one[0].events[0], EventKind::forward);
  const auto forwards_two = of_kind(two[0].events[0], EventKind::forward);
  ASSERT_EQ(forwards_one.size(), 2u);
  ASSERT_EQ(forwards_two.size(), 2u);
  EXPECT_EQ(forwards_one[1].t_start_ns, 6 * kSecond);
  EXPECT_EQ(forwards_two[0].t_start_ns, kSecond);
  EXPECT_EQ(forwards_two[1].t_start_ns, kSecond);
  EXPECT_EQ(one[0].flops, two[0].flops);
}

// sl, two devices with two mini-batches each. A mini-batch takes 7 s: device forward 1 s,
// server forward + backward 4 s, device backward 1 s and step 1 s (the server's 1 s step
// beside them); the device part (no values here) moves instantly. Turns of a whole round
// (sl.batches_per_turn = 0): device 1 trains 0-14 s, device 2 14-28 s; turns of one
// mini-batch: 1, 2, 1, 2 at 0, 7, 14, 21 s, with twice the hand-overs. Both last 28 s.
TEST(SimulatedSlTurns, DevicesTakeTurnsOfTheGivenMiniBatches) {
  SimulationInput input = two_devices("sl", 1);
  for (SimulatedDevice& device : input.devices) device.batches = 2;
  const auto forward_starts = [](const SimulatedRound& round, int rank) {
    std::vector<std::int64_t> starts;
    for (const Event& e : of_kind(round.events[static_cast<std::size_t>(rank)], EventKind::forward)) {
      starts.push_back(e.t_start_ns / kSecond);
    }
    return starts;
  };
  const auto handovers = [](const SimulatedRound& round) {
    return std::count_if(round.events[0].begin(), round.events[0].end(), [](const Event& e) {
      return e.kind == EventKind::send && e.message == MessageType::model;
    });
  };
  const auto whole = simulate(input);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].end_ns, 28 * kSecond);
  EXPECT_EQ(forward_starts(whole[0], 1), (std::vector<std::int64_t>{0, 7}));
  EXPECT_EQ(forward_starts(whole[0], 2), (std::vector<std::int64_t>{14, 21}));
  EXPECT_EQ(handovers(whole[0]), 2);
  input.sl_batches_per_turn = 1;
  const auto single = simulate(input);
  EXPECT_EQ(single[0].end_ns, 28 * kSecond);
  EXPECT_EQ(forward_starts(single[0], 1), (std::vector<std::int64_t>{0, 14}));
  EXPECT_EQ(forward_starts(single[0], 2), (std::vector<std::int64_t>{7, 21}));
  EXPECT_EQ(handovers(single[0]), 4);
  EXPECT_EQ(single[0].flops, whole[0].flops);
}

// Messages of `type` that `rank` sent in a round.
std::vector<Event> sent(const SimulatedRound& round, int rank, MessageType type) {
  std::vector<Event> found;
  for (const Event& e : round.events[static_cast<std::size_t>(rank)]) {
    if (e.kind == EventKind::send && e.message == type) found.push_back(e);
  }
  return found;
}

// Personalised sl, the schedule of SimulatedSlTurns: no device part moves; the server
// sends a device a one-byte word as soon as it has served (and stepped on) the previous
// turn's last mini-batch, so the next device starts while the last one still runs its
// backward and step. Whole turns: device 2 starts at 13 s, not 14; the round ends at
// 27 s. Turns of one mini-batch: words at 0, 6, 12, 18 s (a turn takes the server 6 s);
// the last device steps until 25 s. A device whose word comes while it still steps (its
// own next turn, device 2 having nothing to train) starts once it is done: at 7 s, not 6.
TEST(SimulatedSlTurns, PersonalisedTurnsStartWithAWordAndSendNoDevicePart) {
  SimulationInput input = two_devices("sl", 1);
  input.personalised = true;
  for (SimulatedDevice& device : input.devices) {
    device.batches = 2;
    device.part_state_values = 10;
  }
  const auto forward_starts = [](const SimulatedRound& round, int rank) {
    std::vector<std::int64_t> starts;
    for (const Event& e : of_kind(round.events[static_cast<std::size_t>(rank)], EventKind::forward)) {
      starts.push_back(e.t_start_ns / kSecond);
    }
    return starts;
  };
  const auto whole = simulate(input).at(0);
  EXPECT_EQ(whole.end_ns, 27 * kSecond);
  EXPECT_EQ(forward_starts(whole, 1), (std::vector<std::int64_t>{0, 7}));
  EXPECT_EQ(forward_starts(whole, 2), (std::vector<std::int64_t>{13, 20}));
  input.sl_batches_per_turn = 1;
  const auto single = simulate(input).at(0);
  EXPECT_EQ(single.end_ns, 25 * kSecond);
  EXPECT_EQ(forward_starts(single, 1), (std::vector<std::int64_t>{0, 12}));
  EXPECT_EQ(forward_starts(single, 2), (std::vector<std::int64_t>{6, 18}));
  EXPECT_EQ(sent(whole, 0, MessageType::control).size(), 2u);
  EXPECT_EQ(sent(single, 0, MessageType::control).size(), 4u);
  for (const auto* round : {&whole, &single}) {
    for (const Event& e : sent(*round, 0, MessageType::control)) EXPECT_EQ(e.bytes, 1);
    for (int rank = 0; rank <= 2; ++rank) EXPECT_TRUE(sent(*round, rank, MessageType::model).empty()) << rank;
  }
  input.devices[1].batches = 0;
  const auto alone = simulate(input).at(0);
  EXPECT_EQ(forward_starts(alone, 1), (std::vector<std::int64_t>{0, 7}));
  EXPECT_EQ(alone.end_ns, 14 * kSecond);
}

// sfl as in SimulatedServerStreams (one stream: the server steps for the last time at
// 10-11 s, device 2 at 11-12 s), each device's part 10 of the model's 30 values, averaging
// 0.1 s per value and copy. Plain: once both parts are in (12 s) the server averages two
// whole models (6 s), then sends the parts back: 18 s. Personalised: it averages the two
// server replicas (2 x 20 values, 4 s) as soon as it has served everything, 11-15 s, and
// nothing travels.
TEST(SimulatedPersonalisedSfl, TheServerAveragesItsReplicasAloneAndNothingTravels) {
  SimulationInput input = two_devices("sfl", 1);
  input.model_state_values = 30;
  input.aggregate_s_per_parameter = 0.1;
  for (SimulatedDevice& device : input.devices) device.part_state_values = 10;
  const auto plain = simulate(input).at(0);
  EXPECT_EQ(plain.end_ns, 18 * kSecond);
  EXPECT_EQ(sent(plain, 0, MessageType::model).size(), 2u);
  input.personalised = true;
  const auto personal = simulate(input).at(0);
  EXPECT_EQ(personal.end_ns, 15 * kSecond);
  const auto averaged = of_kind(personal.events[0], EventKind::aggregate);
  ASSERT_EQ(averaged.size(), 1u);
  EXPECT_EQ(averaged[0].t_start_ns, 11 * kSecond);
  EXPECT_EQ(averaged[0].t_end_ns, 15 * kSecond);
  for (int rank = 0; rank <= 2; ++rank) EXPECT_TRUE(sent(personal, rank, MessageType::model).empty()) << rank;
  EXPECT_EQ(personal.flops, plain.flops);
}

// sfl2, two devices with two mini-batches each, stages as in SimulatedSlTurns: both devices
// upload at 1 s, but the server takes the order's first device's round alone: its
// mini-batches at 1-6 s and 8-13 s (the second forward starts at 7 s, once the device has
// stepped). The other device's upload has waited since 1 s; it is taken at 13 s, its next
// at 20 s; it steps for the last time in 25-26 s, and the parts (no values) are averaged
// at once: 26 s. sfl on one stream would interleave the two devices.
TEST(SimulatedSplitFedV2, TheServerTakesOneDevicesRoundAtATimeInTheSeededOrder) {
  SimulationInput input = two_devices("sfl2", 2);
  for (SimulatedDevice& device : input.devices) device.batches = 2;
  input.seed = 7;
  const auto rounds = simulate(input);
  ASSERT_EQ(rounds.size(), 2u);
  for (const SimulatedRound& round : rounds) {
    SCOPED_TRACE("round " + std::to_string(round.round));
    const std::vector<int> order = device_serving_order(7, round.round, 2);
    const auto starts = [&](int rank) {
      std::vector<std::int64_t> at;
      for (const Event& e : of_kind(round.events[static_cast<std::size_t>(rank)], EventKind::forward)) {
        at.push_back((e.t_start_ns - round.start_ns) / kSecond);
      }
      return at;
    };
    EXPECT_EQ(round.end_ns - round.start_ns, 26 * kSecond);
    EXPECT_EQ(starts(0), (std::vector<std::int64_t>{1, 8, 13, 20}));
    EXPECT_EQ(starts(order[0]), (std::vector<std::int64_t>{0, 7}));
    EXPECT_EQ(starts(order[1]), (std::vector<std::int64_t>{0, 19}));
    std::vector<int> gradients_to;
    for (const Event& e : sent(round, 0, MessageType::gradient)) gradients_to.push_back(e.peer);
    EXPECT_EQ(gradients_to, (std::vector<int>{order[0], order[0], order[1], order[1]}));
  }
  // The same FLOPs as sfl: only the order differs.
  input.method = "sfl";
  EXPECT_EQ(simulate(input)[0].flops, rounds[0].flops);
}

// The order is a permutation drawn from (seed, round) alone, so the runtime and the
// simulator (and any machine) agree on it; it changes from round to round and with the seed.
// Without transfer events (the planner's predictions) every method's rounds are the same:
// the same compute events and round windows, and the bytes the sends carried, counted.
TEST(SimulatedTransferEvents, LeavingThemOutChangesNothingButTheEvents) {
  for (const std::string method : {"fl", "sl", "sfl", "pipar"}) {
    SCOPED_TRACE(method);
    SimulationInput input = two_devices(method, 2);
    input.devices[0].uplink.rate_bits_per_second = 8000;  // 1 KB/s: the transfers matter
    input.devices[1].downlink.rate_bits_per_second = 16000;
    input.model_state_values = 100;
    for (SimulatedDevice& device : input.devices) device.part_state_values = 50;  // models travel too
    const std::vector<SimulatedRound> all = simulate(input);
    input.transfer_events = false;
    const std::vector<SimulatedRound> lean = simulate(input);
    ASSERT_EQ(all.size(), lean.size());
    for (std::size_t r = 0; r < all.size(); ++r) {
      EXPECT_EQ(lean[r].start_ns, all[r].start_ns);
      EXPECT_EQ(lean[r].end_ns, all[r].end_ns);
      std::int64_t up = 0, down = 0;
      for (std::size_t rank = 0; rank < all[r].events.size(); ++rank) {
        std::vector<std::pair<std::int64_t, std::int64_t>> compute;
        for (const trace::Event& e : all[r].events[rank]) {
          if (e.kind == trace::EventKind::send) (rank == 0 ? down : up) += e.bytes;
          if (e.lane == trace::Lane::compute) compute.emplace_back(e.t_start_ns, e.t_end_ns);
        }
        std::vector<std::pair<std::int64_t, std::int64_t>> kept;
        for (const trace::Event& e : lean[r].events[rank]) {
          EXPECT_EQ(e.lane, trace::Lane::compute);
          kept.emplace_back(e.t_start_ns, e.t_end_ns);
        }
        EXPECT_EQ(kept, compute) << "rank " << rank;
      }
      EXPECT_GT(up, 0);
      EXPECT_EQ(lean[r].bytes_up, up);
      EXPECT_EQ(lean[r].bytes_down, down);
      EXPECT_EQ(all[r].bytes_up, up);
    }
  }
}

TEST(DeviceServingOrder, APermutationFixedBySeedAndRound) {
  std::set<std::vector<int>> seen;
  for (int round = 0; round < 20; ++round) {
    std::vector<int> order = device_serving_order(1, round, 5);
    EXPECT_EQ(order, device_serving_order(1, round, 5));
    seen.insert(order);
    std::sort(order.begin(), order.end());
    EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4, 5}));
  }
  EXPECT_GT(seen.size(), 10u);
  EXPECT_NE(device_serving_order(1, 0, 8), device_serving_order(2, 0, 8));
  EXPECT_EQ(device_serving_order(1, 0, 1), (std::vector<int>{1}));
  EXPECT_TRUE(device_serving_order(1, 0, 0).empty());
}

TEST(SlTurns, RoundRobinUntilEveryDeviceHasTrainedItsMiniBatches) {
  const auto turns = sl_turns({3, 1, 2}, 2);
  const std::vector<std::vector<std::int64_t>> expected = {{1, 0, 2}, {2, 0, 1}, {3, 0, 2}, {1, 2, 1}};
  ASSERT_EQ(turns.size(), expected.size());
  for (std::size_t i = 0; i < turns.size(); ++i) {
    EXPECT_EQ((std::vector<std::int64_t>{turns[i].device, turns[i].first_batch, turns[i].batches}), expected[i]) << i;
  }
  EXPECT_EQ(sl_turns({3, 1, 2}, 0).size(), 3u);  // one turn each, all of its mini-batches
  EXPECT_EQ(sl_turns({3, 1, 2}, 0)[0].batches, 3);
  EXPECT_EQ(sl_turns({2, 2}, 1).size(), 4u);
}

// psl: mini-batch b is served together by every device that has a b-th, ascending.
TEST(PslBatches, EachMiniBatchTogetherWithTheDevicesThatHaveIt) {
  const std::vector<std::vector<int>> expected = {{1, 2, 3}, {1, 3}, {1}};
  EXPECT_EQ(psl_batches({3, 1, 2}), expected);
  EXPECT_EQ(psl_batches({0, 2}), (std::vector<std::vector<int>>{{2}, {2}}));
  EXPECT_TRUE(psl_batches({0, 0}).empty());
  EXPECT_TRUE(psl_batches({}).empty());
}

// sfl as above (one stream, a round of 12 s), two rounds; from round 1 on a plan cuts both
// devices elsewhere: device stages 0.5 s, the server's 1 + 1 + 0.5 s, half the activation.
// Device 1's activation arrives at 0.5 s, the server serves it in 0.5-3.0 s and device 2's
// in 3.0-5.5 s; device 2 steps in 5.5-6.0 s: round 1 lasts 6 s.
TEST(SimulatedLaterPlans, APlanAdoptedBetweenRoundsCutsTheDevicesFromItsRoundOn) {
  SimulationInput input = two_devices("sfl", 2);
  const auto planned_once = simulate(input);
  PlanPhase later{1, input.devices};
  for (SimulatedDevice& device : later.devices) {
    device.part = part(0.5, 0.5, 0.5);
    device.server = part(1, 1, 0.5);
    device.activation_bytes_per_sample = 50;
    device.part_state_values = 10;  // the part it uploads for averaging: 40 bytes
    device.uplink.delay_ns = 100 * kSecond;  // links are the run's, not the plan's: ignored
  }
  input.later_plans.push_back(later);
  const auto replanned = simulate(input);
  ASSERT_EQ(replanned.size(), 2u);
  EXPECT_EQ(planned_once[1].end_ns - planned_once[1].start_ns, 12 * kSecond);
  EXPECT_EQ(replanned[0].end_ns, planned_once[0].end_ns);
  for (std::size_t r = 0; r < 3; ++r) {  // round 0 as without the later plan
    const auto& a = replanned[0].events[r];
    const auto& b = planned_once[0].events[r];
    ASSERT_EQ(a.size(), b.size()) << "rank " << r;
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_TRUE(a[i].t_start_ns == b[i].t_start_ns && a[i].t_end_ns == b[i].t_end_ns && a[i].bytes == b[i].bytes)
          << "rank " << r << ", event " << i;
    }
  }
  EXPECT_EQ(replanned[1].start_ns, 12 * kSecond);
  EXPECT_EQ(replanned[1].end_ns, 18 * kSecond);
  for (std::size_t round = 0; round < 2; ++round) {
    const auto uploads = of_kind(replanned[round].events[1], EventKind::send, Lane::uplink);
    ASSERT_EQ(uploads.size(), 2u);  // the activation (2 samples + int64 labels), the part
    EXPECT_EQ(uploads[0].bytes, round == 0 ? 2 * (100 + 8) : 2 * (50 + 8)) << "round " << round;
    EXPECT_EQ(uploads[1].bytes, round == 0 ? 0 : 40) << "round " << round;
  }
}

// pipar, the two devices with mini-batches of 2 in 1 micro-batch; a later plan cuts them in
// 2 from round 2 on (two uploads a mini-batch, then the part), also when the ranks share
// one core (processor sharing, simulated in passes): the rounds before it stay as planned
// (within the passes' 0.5% tolerance).
TEST(SimulatedLaterPlans, MicroBatchCountsMoveWithThePlanAlsoWithSharedCores) {
  SimulationInput input = two_devices("pipar", 3);
  SimulatedDevice cut = input.devices.front();
  cut.micro_batches = 2;
  for (const int cores : {0, 1}) {
    input.host_cores = cores;
    input.later_plans.clear();
    const auto planned_once = simulate(input);
    input.later_plans = {{2, {cut, cut}}};
    const auto replanned = simulate(input);
    ASSERT_EQ(replanned.size(), 3u);
    for (std::size_t round = 0; round < 3; ++round) {
      const auto uploads = of_kind(replanned[round].events[1], EventKind::send, Lane::uplink);
      EXPECT_EQ(uploads.size(), round < 2 ? 2u : 3u) << "cores " << cores << ", round " << round;
    }
    for (std::size_t round = 0; round < 2; ++round) {
      const auto length = [&](const std::vector<SimulatedRound>& rounds) {
        return static_cast<double>(rounds[round].end_ns - rounds[round].start_ns);
      };
      EXPECT_NEAR(length(replanned), length(planned_once), 0.005 * length(planned_once))
          << "cores " << cores << ", round " << round;
    }
  }
}

TEST(SimulatedLaterPlans, RefusesPlansOutOfOrderOrForOtherDevices) {
  SimulationInput input;
  input.method = "pipar";
  input.batch_size = 2;
  input.rounds = 3;
  SimulatedDevice device;
  device.samples = 2;
  device.part = part(1, 1, 1);
  device.server = part(1, 1, 1);
  input.devices = {device};
  for (const std::vector<PlanPhase>& later :
       {std::vector<PlanPhase>{{0, {device}}}, std::vector<PlanPhase>{{3, {device}}},
        std::vector<PlanPhase>{{2, {device}}, {1, {device}}}, std::vector<PlanPhase>{{1, {device, device}}}}) {
    input.later_plans = later;
    EXPECT_THROW(simulate(input), std::invalid_argument);
  }
  input.later_plans = {{1, {device}}, {2, {device}}};
  EXPECT_EQ(simulate(input).size(), 3u);
  input.method = "fl";
  EXPECT_THROW(simulate(input), std::invalid_argument);
}

}  // namespace
}  // namespace cmlbed::sim
