// The transport under mpirun (3-4 ranks; run once over shared memory and once with
// --mca btl tcp,self): payloads arrive intact and in order, many in flight, both
// directions, shaped links pace, transfers progress while the sender computes, and
// wait_any hands out receives in arrival order; rank 0 hands every rank its own bytes.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <numeric>
#include <thread>

#include "cmlbed/net/clock_sync.hpp"
#include "cmlbed/net/distribute.hpp"
#include "cmlbed/net/transport.hpp"

namespace cmlbed::net {
namespace {

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// Bytes that depend on (sender, sequence, position), so a mix-up cannot go unseen.
Payload pattern(int sender, int sequence, std::size_t bytes) {
  Payload data(bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    data[i] = static_cast<std::byte>((i * 131 + static_cast<std::size_t>(sender) * 17 +
                                      static_cast<std::size_t>(sequence) * 7) & 0xff);
  }
  return data;
}

MessageHeader header(MessageKind kind, int round, int batch) {
  MessageHeader h;
  h.kind = kind;
  h.round = round;
  h.batch = batch;
  return h;
}

void spin_for(std::chrono::milliseconds duration) {
  const auto end = std::chrono::steady_clock::now() + duration;
  volatile double sink = 0;
  while (std::chrono::steady_clock::now() < end) {
    for (int i = 0; i < 1000; ++i) sink = sink + i * 0.5;
  }
}

TEST(Transport, ManyMessagesInFlightArriveIntactAndInOrder) {
  trace::Timeline timeline;
  Transport transport(MPI_COMM_WORLD, timeline, {});
  const std::vector<std::size_t> sizes = {0, 1, 1000, 3 << 20, 17, 5 << 20, 64};
  if (world_rank() == 0) {
    std::vector<RecvHandle> posted;
    for (int device = 1; device < world_size(); ++device) {
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        posted.push_back(transport.post_recv(device, MessageKind::activation));
      }
    }
    std::size_t next = 0;
    for (int device = 1; device < world_size(); ++device) {
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        Message m = posted[next++].wait();
        EXPECT_EQ(m.header.batch, static_cast<int>(i));
        EXPECT_EQ(m.header.sequence, i);
        EXPECT_EQ(m.payload, pattern(device, static_cast<int>(i), sizes[i]));
      }
    }
  } else {
    std::vector<SendHandle> sent;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      sent.push_back(transport.send(0, header(MessageKind::activation, 0, static_cast<int>(i)),
                                    pattern(world_rank(), static_cast<int>(i), sizes[i])));
    }
    for (auto& handle : sent) handle.wait();
    EXPECT_EQ(transport.stats().bytes_sent,
              static_cast<std::int64_t>(std::accumulate(sizes.begin(), sizes.end(), std::size_t{0})));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(Transport, KindsAreSeparateChannelsAndBothDirectionsWork) {
  trace::Timeline timeline;
  Transport transport(MPI_COMM_WORLD, timeline, {});
  if (world_rank() == 0) {
    for (int device = 1; device < world_size(); ++device) {
      // Receive the model message first although the device sent it second.
      Message model = transport.recv(device, MessageKind::model);
      Message act = transport.recv(device, MessageKind::activation);
      EXPECT_EQ(model.payload, pattern(device, 2, 100));
      EXPECT_EQ(act.payload, pattern(device, 1, 4096));
      transport.send(device, header(MessageKind::gradient, 1, 0), pattern(0, device, 777)).wait();
    }
  } else {
    transport.send(0, header(MessageKind::activation, 1, 0), pattern(world_rank(), 1, 4096)).detach();
    transport.send(0, header(MessageKind::model, 1, 0), pattern(world_rank(), 2, 100)).detach();
    Message gradient = transport.recv(0, MessageKind::gradient);
    EXPECT_EQ(gradient.payload, pattern(0, world_rank(), 777));
    EXPECT_EQ(gradient.header.round, 1);
  }
  // The timeline holds this rank's send and receive events with the right lanes.
  const auto events = timeline.drain();
  ASSERT_FALSE(events.empty());
  for (const auto& e : events) {
    EXPECT_TRUE(e.kind == trace::EventKind::send || e.kind == trace::EventKind::recv);
    EXPECT_LE(e.t_start_ns, e.t_end_ns);
    const bool device_to_server = (world_rank() != 0) == (e.kind == trace::EventKind::send);
    EXPECT_EQ(e.lane, device_to_server ? trace::Lane::uplink : trace::Lane::downlink);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Rank 1 sends to the server through a shaped uplink; the other ranks unshaped.
std::map<int, LinkSpec> device_uplink(double rate_bits_per_second, std::uint64_t burst_bytes = 32 << 10) {
  if (world_rank() != 1) return {};
  LinkSpec uplink;
  uplink.rate_bits_per_second = rate_bits_per_second;
  uplink.burst_bytes = burst_bytes;
  return {{0, uplink}};
}

TEST(Transport, ShapedUplinkPacesTheTransfer) {
  // 4 MiB over a 100 mbit uplink with a 32 KiB bucket cannot arrive sooner than
  // (size - burst) / rate = 0.333 s after it was sent.
  trace::Timeline timeline;
  const bool device = world_rank() == 1;
  Transport transport(MPI_COMM_WORLD, timeline, device_uplink(100e6));
  constexpr std::size_t kBytes = 4 << 20;
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  if (world_rank() == 0) {
    Message m = transport.recv(1, MessageKind::activation);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(m.payload.size(), kBytes);
    EXPECT_GE(seconds, (kBytes - (32 << 10)) * 8 / 100e6 * 0.98);
    EXPECT_LT(seconds, 5.0);
  } else if (device) {
    transport.send(0, header(MessageKind::activation, 0, 0), pattern(1, 0, kBytes)).wait();
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(Transport, UnshapedSendsPassTheLink) {
  // The same 4 MiB past a 10 mbit uplink (3.3 s if shaped): no token bucket, no pacing.
  trace::Timeline timeline;
  const bool device = world_rank() == 1;
  Transport transport(MPI_COMM_WORLD, timeline, device_uplink(10e6));
  constexpr std::size_t kBytes = 4 << 20;
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  if (world_rank() == 0) {
    Message m = transport.recv(1, MessageKind::model);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(m.payload, pattern(1, 0, kBytes));
    EXPECT_LT(seconds, 1.0);
  } else if (device) {
    transport.send(0, header(MessageKind::model, 0, 0), pattern(1, 0, kBytes), Transport::Shaping::none).wait();
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(Transport, TransfersPostedWhileNotCountingStayOutOfTheCounters) {
  // Between rounds the runs turn counting off (the evaluation's traffic is no round's):
  // rank 1 sends 100 bytes counted, then 1000 and 10 posted while not counting, then 1
  // counted again; rank 0's receives likewise. Each side counts 101 bytes, 2 messages.
  trace::Timeline timeline;
  Transport transport(MPI_COMM_WORLD, timeline, {});
  const std::vector<std::pair<std::size_t, bool>> messages = {{100, true}, {1000, false}, {10, false}, {1, true}};
  if (world_rank() <= 1) {
    for (std::size_t i = 0; i < messages.size(); ++i) {
      transport.set_counting(messages[i].second);
      if (world_rank() == 0) {
        EXPECT_EQ(transport.recv(1, MessageKind::model).payload.size(), messages[i].first);
      } else {
        transport.send(0, header(MessageKind::model, 0, static_cast<int>(i)), pattern(1, 0, messages[i].first)).wait();
      }
    }
    const TransportStats stats = transport.stats();
    EXPECT_EQ(world_rank() == 0 ? stats.bytes_received : stats.bytes_sent, 101);
    EXPECT_EQ(world_rank() == 0 ? stats.messages_received : stats.messages_sent, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(Transport, ProgressesWhileTheSenderComputes) {
  // Device 1 posts a 32 MiB send over a 1 gbit uplink (0.27 s of link time) and then
  // computes for 2 s without calling MPI. The communication thread must move the data
  // meanwhile: the server has it long before the computation ends.
  trace::Timeline timeline;
  const bool device = world_rank() == 1;
  Transport transport(MPI_COMM_WORLD, timeline, device_uplink(1e9, 64 << 10));
  constexpr std::size_t kBytes = 32 << 20;
  RecvHandle incoming;
  if (world_rank() == 0) incoming = transport.post_recv(1, MessageKind::activation);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  if (world_rank() == 0) {
    Message m = incoming.wait();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(m.payload.size(), kBytes);
    EXPECT_LT(seconds, 1.2) << "the transfer waited for the sender's computation";
  } else if (device) {
    SendHandle sent = transport.send(0, header(MessageKind::activation, 0, 0),
                                     Payload(kBytes, std::byte{1}));
    spin_for(std::chrono::milliseconds(2000));
    sent.wait();
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(Transport, WaitAnyHandsOutReceivesInArrivalOrder) {
  // Each device sends after a pause that is shorter the higher its rank: the server's
  // wait_any must hand the receives out highest rank first, and return nothing at its
  // deadline for a receive nobody answers.
  trace::Timeline timeline;
  Transport transport(MPI_COMM_WORLD, timeline, {});
  constexpr auto kStagger = std::chrono::milliseconds(150);
  std::vector<RecvHandle> posted;
  if (world_rank() == 0) {
    for (int device = 1; device < world_size(); ++device) {
      posted.push_back(transport.post_recv(device, MessageKind::activation));
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) {
    std::vector<int> devices;
    for (int device = 1; device < world_size(); ++device) devices.push_back(device);
    std::vector<int> order;
    while (!posted.empty()) {
      std::vector<const RecvHandle*> waiting;
      for (const auto& h : posted) waiting.push_back(&h);
      const auto ready = wait_any(waiting, std::chrono::steady_clock::now() + std::chrono::seconds(30));
      ASSERT_TRUE(ready.has_value()) << "no message within 30 s";
      const Message m = posted[*ready].wait();
      EXPECT_EQ(m.payload, pattern(devices[*ready], 0, 1000));
      order.push_back(devices[*ready]);
      posted.erase(posted.begin() + static_cast<std::ptrdiff_t>(*ready));
      devices.erase(devices.begin() + static_cast<std::ptrdiff_t>(*ready));
    }
    std::vector<int> expected;
    for (int device = world_size() - 1; device >= 1; --device) expected.push_back(device);
    EXPECT_EQ(order, expected);
    const RecvHandle silent = transport.post_recv(1, MessageKind::control);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(wait_any({&silent}, start + std::chrono::milliseconds(50)), std::nullopt);
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(50));
  } else {
    std::this_thread::sleep_for(kStagger * (world_size() - world_rank()));
    transport.send(0, header(MessageKind::activation, 0, 0), pattern(world_rank(), 0, 1000)).wait();
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(ClockSync, OffsetsOnOneHostAgreeWithinAMillisecond) {
  // On one host every rank reads the same monotonic clock, so the true offsets are
  // all equal (minus rank 0's origin); the estimates must agree within 1 ms.
  const ClockEstimate mine = synchronize_clocks(MPI_COMM_WORLD);
  const auto all = gather_clock_estimates(mine, MPI_COMM_WORLD);
  if (world_rank() == 0) {
    ASSERT_EQ(all.size(), static_cast<std::size_t>(world_size()));
    for (std::size_t r = 1; r < all.size(); ++r) {
      EXPECT_LT(std::abs(all[r].offset_ns - all[0].offset_ns), 1000000) << "rank " << r;
      EXPECT_LT(all[r].uncertainty_ns, 1000000) << "rank " << r;
    }
  }
}

TEST(Distribute, EveryRankGetsItsOwnBytesFromRankZero) {
  // Rank r > 1 gets r * 100000 bytes, each a function of (rank, position); rank 1 gets
  // an empty message, which must arrive all the same.
  auto bytes_for = [](int rank) {
    std::vector<std::uint8_t> bytes(rank == 1 ? 0 : static_cast<std::size_t>(rank) * 100000);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>((i * 7 + rank) & 0xff);
    return bytes;
  };
  std::vector<int> asked;
  const std::vector<std::uint8_t> mine = distribute_from_root(MPI_COMM_WORLD, [&](int rank) {
    asked.push_back(rank);
    return bytes_for(rank);
  });
  if (world_rank() == 0) {
    EXPECT_TRUE(mine.empty());
    std::vector<int> expected(static_cast<std::size_t>(world_size() - 1));
    std::iota(expected.begin(), expected.end(), 1);
    EXPECT_EQ(asked, expected);  // in rank order, once each
  } else {
    EXPECT_TRUE(asked.empty());
    EXPECT_EQ(mine, bytes_for(world_rank()));
  }
}

}  // namespace
}  // namespace cmlbed::net
