// The transport's communication thread and its public face. The parts it drives live
// next to it: request_engine (MPI_Testsome bookkeeping), outbox (chunk booking and
// release), inbox (receive channels), and the wake-up policy (wake_policy.hpp).
#include "cmlbed/net/transport.hpp"

#include <pthread.h>
#include <time.h>

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "cmlbed/base/cpu_usage.hpp"
#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/wake_policy.hpp"
#include "inbox.hpp"
#include "outbox.hpp"
#include "request_engine.hpp"
#include "transfer_state.hpp"

namespace cmlbed::net {

using detail::TransferState;

namespace {
// How long a closing transport keeps trying to finish sends to a peer that may be dead.
constexpr auto kStopGrace = std::chrono::seconds(10);
}  // namespace

class Transport::Impl {
 public:
  Impl(MPI_Comm world, trace::Timeline& timeline, const std::map<int, LinkSpec>& links,
       std::optional<std::int64_t> links_started_ns)
      : timeline_(timeline), comm_(duplicate(world)),
        outbox_(comm_, links, links_started_ns.value_or(timeline_.now_ns()), engine_,
                [this](const TransferState& s) { record_transfer(trace::EventKind::send, s); }),
        inbox_(comm_, engine_, [this] { return timeline_.now_ns(); },
               [this](const TransferState& s) { record_transfer(trace::EventKind::recv, s); }) {
    rank_ = comm_rank(comm_);
    size_ = comm_size(comm_);
    thread_ = std::thread([this] { run(); });
    // The fidelity figures count this thread's waits for a core apart (base/cpu_usage.hpp);
    // a name that cannot be set only merges them with the compute threads'.
    pthread_setname_np(thread_.native_handle(), kNetworkThreadName);
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
    // A peer that died leaves sends that never complete: after the grace period the
    // thread gave up on them, and the caller is about to abort the job. Touching those
    // requests (or freeing the communicator under them) could block, so leave them.
    if (abandoned_) return;
    engine_.cancel_all();
    MPI_Comm_free(&comm_);
  }

  SendHandle send(int peer, MessageHeader header, Payload payload, bool unshaped) {
    check_peer(peer);
    auto state = std::make_shared<TransferState>();
    state->peer = peer;
    state->kind = header.kind;
    state->unshaped = unshaped;
    state->t_start_ns = timeline_.now_ns();
    header.bytes = static_cast<std::int64_t>(payload.size());
    header.chunk_bytes = outbox_.chunk_bytes(peer, unshaped);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      throw_if_failed();
      header.sequence = next_send_sequence_[{peer, static_cast<int>(header.kind)}]++;
      state->counted = counting_;
      state->wire_header = header;
      state->message.header = header;
      state->message.payload = std::move(payload);
      new_sends_.push_back(state);
    }
    wake_.notify_all();
    // A device's communication thread, woken for this send while the ranks' compute
    // threads hold every core, waits for one before it takes the send; yielding the core
    // lets it run first. Not on the server, whose compute thread is the busiest: there
    // the yield gives its core to other ranks. With a core per rank it returns at once.
    // The measurements: docs/explanation/architecture.md, "Waking up costs the core".
    if (rank_ != 0) std::this_thread::yield();
    return SendHandle(state);
  }

  RecvHandle post_recv(int peer, MessageKind kind) {
    check_peer(peer);
    auto state = std::make_shared<TransferState>();
    state->peer = peer;
    state->kind = kind;
    state->wire_header.kind = kind;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      throw_if_failed();
      state->counted = counting_;
      new_recvs_.push_back(state);
    }
    wake_.notify_all();
    return RecvHandle(state);
  }

  int rank() const { return rank_; }
  int size() const { return size_; }
  TransportStats stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }

  void set_counting(bool counting) {
    std::lock_guard<std::mutex> lock(mutex_);
    counting_ = counting;
  }

  double thread_cpu_seconds() {
    clockid_t clock;
    timespec used{};
    if (pthread_getcpuclockid(thread_.native_handle(), &clock) != 0 ||
        clock_gettime(clock, &used) != 0) {
      throw std::runtime_error("transport: cannot read the communication thread's CPU clock");
    }
    return static_cast<double>(used.tv_sec) + static_cast<double>(used.tv_nsec) * 1e-9;
  }

 private:
  static MPI_Comm duplicate(MPI_Comm world) {
    MPI_Comm comm = MPI_COMM_NULL;
    CMLBED_MPI_CHECK(MPI_Comm_dup(world, &comm));
    // Errors come back as codes (turned into exceptions), not as an abort.
    CMLBED_MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    return comm;
  }

  void check_peer(int peer) const {
    if (peer < 0 || peer >= size_ || peer == rank_) {
      throw std::invalid_argument("transport: invalid peer rank " + std::to_string(peer));
    }
  }

  void throw_if_failed() const {
    if (failure_) std::rethrow_exception(failure_);
  }

  // ---- communication thread ----

  void run() {
    std::int64_t poll_ns = kMinPollIntervalNs;
    try {
      while (true) {
        std::vector<std::shared_ptr<TransferState>> sends, recvs;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          sends.swap(new_sends_);
          recvs.swap(new_recvs_);
          if (stopping_ && sends.empty() && outbox_.idle()) return;
        }
        for (auto& s : sends) outbox_.schedule(s, timeline_.now_ns());
        for (auto& r : recvs) inbox_.queue(r);
        const bool released = outbox_.release_due(timeline_.now_ns());
        const bool completed = engine_.test();

        std::unique_lock<std::mutex> lock(mutex_);
        WakeInputs in;
        in.poll_ns = poll_ns;
        in.progressed = !new_sends_.empty() || !new_recvs_.empty() || released || completed;
        if (!in.progressed) {
          if (stopping_ && outbox_.idle()) return;
          if (stopping_) {
            if (!stop_deadline_) stop_deadline_ = std::chrono::steady_clock::now() + kStopGrace;
            if (std::chrono::steady_clock::now() > *stop_deadline_) {
              abandoned_ = true;
              return;
            }
          }
          in.requests_pending = !engine_.empty();
          in.only_paced_sends = engine_.only_paced_sends();
          in.bytes_moving = engine_.bytes_moving();
          in.arrival_look_ns = engine_.arrival_look_ns();
          in.next_release_ns = outbox_.next_release_ns();
          in.now_ns = timeline_.now_ns();
        }
        const WakePlan plan = plan_wake(in);
        poll_ns = plan.next_poll_ns;
        const auto has_work = [&] { return !new_sends_.empty() || !new_recvs_.empty() || stopping_; };
        if (plan.kind == WakePlan::Kind::sleep) {
          wake_.wait_for(lock, std::chrono::nanoseconds(plan.sleep_ns), has_work);
        } else if (plan.kind == WakePlan::Kind::park) {
          wake_.wait(lock, has_work);
        }
      }
    } catch (...) {
      fail_everything(std::current_exception());
    }
  }

  // Puts a completed send or receive on the timeline and into the counters. The
  // lane is the link's direction: devices send up, the server sends down.
  void record_transfer(trace::EventKind kind, const TransferState& state) {
    const bool upward = (rank_ != 0) == (kind == trace::EventKind::send);
    const MessageHeader& h = state.wire_header;
    trace::Event event;
    event.lane = upward ? trace::Lane::uplink : trace::Lane::downlink;
    event.kind = kind;
    event.message = message_type(h.kind);
    event.round = h.round;
    event.batch = h.batch;
    event.micro_batch = h.micro_batch;
    event.peer = state.peer;
    event.bytes = h.bytes;
    event.t_start_ns = state.t_start_ns;
    event.t_end_ns = timeline_.now_ns();
    timeline_.record(event);
    if (!state.counted) return;
    std::lock_guard<std::mutex> lock(mutex_);
    const bool sent = kind == trace::EventKind::send;
    (sent ? stats_.bytes_sent : stats_.bytes_received) += h.bytes;
    ++(sent ? stats_.messages_sent : stats_.messages_received);
  }

  void fail_everything(std::exception_ptr error) {
    std::vector<std::shared_ptr<TransferState>> pending;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      failure_ = error;
      pending.insert(pending.end(), new_sends_.begin(), new_sends_.end());
      pending.insert(pending.end(), new_recvs_.begin(), new_recvs_.end());
    }
    outbox_.collect_queued(pending);
    inbox_.collect_waiting(pending);
    for (auto& state : pending) state->finish(error);
  }

  trace::Timeline& timeline_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;

  // Shared between the caller's threads and the communication thread.
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::exception_ptr failure_;
  std::vector<std::shared_ptr<TransferState>> new_sends_, new_recvs_;
  std::map<std::pair<int, int>, std::uint64_t> next_send_sequence_;
  TransportStats stats_;
  bool counting_ = true;  // guarded by mutex_: new transfers go into stats_

  // Owned by the communication thread (outbox_.chunk_bytes() aside: it only reads).
  detail::RequestEngine engine_;
  detail::Outbox outbox_;
  detail::Inbox inbox_;
  std::optional<std::chrono::steady_clock::time_point> stop_deadline_;
  bool abandoned_ = false;
  std::thread thread_;
};

Transport::Transport(MPI_Comm comm, trace::Timeline& timeline,
                     const std::map<int, LinkSpec>& outgoing_links,
                     std::optional<std::int64_t> links_started_ns)
    : impl_(std::make_unique<Impl>(comm, timeline, outgoing_links, links_started_ns)) {}
Transport::~Transport() = default;

SendHandle Transport::send(int peer, MessageHeader header, Payload payload, Shaping shaping) {
  return impl_->send(peer, header, std::move(payload), shaping == Shaping::none);
}
RecvHandle Transport::post_recv(int peer, MessageKind kind) { return impl_->post_recv(peer, kind); }
int Transport::rank() const { return impl_->rank(); }
int Transport::size() const { return impl_->size(); }
TransportStats Transport::stats() const { return impl_->stats(); }
void Transport::set_counting(bool counting) { impl_->set_counting(counting); }
double Transport::communication_thread_cpu_seconds() const {
  return impl_->thread_cpu_seconds();
}

}  // namespace cmlbed::net
