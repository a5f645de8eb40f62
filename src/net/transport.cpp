#include "cmlbed/net/transport.hpp"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "cmlbed/net/chunk_pacing.hpp"
#include "cmlbed/net/mpi_error.hpp"

namespace cmlbed::net {

namespace detail {

// Shared by a handle and the communication thread, so dropping a handle never frees
// a buffer MPI still uses.
struct TransferState {
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  bool taken = false;
  std::exception_ptr error;
  Message message;
  MessageKind kind = MessageKind::control;  // set before the handle exists, never changed
  MessageHeader wire_header;  // the header as sent / received
  int peer = -1;
  int chunks_left = 0;
  std::int64_t next_offset = 0;  // receiver: where the next chunk receive goes
  std::int64_t t_start_ns = 0;

  void finish(std::exception_ptr failure = nullptr) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
      error = failure;
    }
    changed.notify_all();
  }
};

}  // namespace detail

using detail::TransferState;

namespace {

// Chunk receives outstanding per message.
constexpr int kReceiveWindow = 8;

// While MPI requests are pending the thread polls, starting at the minimum interval
// after any progress and backing off geometrically: up to 200 us while a message's
// bytes are moving (TCP pushes a large message only as often as MPI is called: measured
// here, a 1 ms cap halved unshaped TCP throughput), up to 1 ms while only receives
// posted ahead wait for their first byte (cheap on CPU: each wake-up also disturbs the
// computing thread; see the overlap benchmark). Shaped messages are the exception:
// their chunks come at the link's pace, which the header carries, so their receiver
// looks at that rhythm, and their sender wakes only when chunks are due (both in
// chunk_pacing.hpp).
constexpr auto kMinPollInterval = std::chrono::microseconds(2);
constexpr int kPollBackoff = 2;
constexpr auto kMaxPollWhileMoving = std::chrono::microseconds(200);
constexpr auto kMaxPollInterval = std::chrono::microseconds(1000);

// How long a closing transport keeps trying to finish sends to a peer that may be dead.
constexpr auto kStopGrace = std::chrono::seconds(10);

int header_tag(MessageKind kind) { return 2 * static_cast<int>(kind); }
int payload_tag(MessageKind kind) { return 2 * static_cast<int>(kind) + 1; }

void wait_done(TransferState& state) {
  std::unique_lock<std::mutex> lock(state.mutex);
  state.changed.wait(lock, [&] { return state.done; });
  if (state.error) std::rethrow_exception(state.error);
}

bool wait_done_for(TransferState& state, std::chrono::nanoseconds timeout) {
  std::unique_lock<std::mutex> lock(state.mutex);
  if (!state.changed.wait_for(lock, timeout, [&] { return state.done; })) return false;
  if (state.error) std::rethrow_exception(state.error);
  return true;
}

Message take_message(TransferState& state) {
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.taken) throw std::logic_error("RecvHandle: the message was already taken");
  state.taken = true;
  return std::move(state.message);
}

}  // namespace

MessageKind SendHandle::kind() const { return state_->kind; }
MessageKind RecvHandle::kind() const { return state_->kind; }

bool SendHandle::done() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->done;
}
void SendHandle::wait() const { wait_done(*state_); }
bool SendHandle::wait_for(std::chrono::nanoseconds timeout) const {
  return wait_done_for(*state_, timeout);
}

bool RecvHandle::ready() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->done;
}
Message RecvHandle::wait() {
  wait_done(*state_);
  return take_message(*state_);
}
std::optional<Message> RecvHandle::wait_for(std::chrono::nanoseconds timeout) {
  if (!wait_done_for(*state_, timeout)) return std::nullopt;
  return take_message(*state_);
}

class Transport::Impl {
 public:
  Impl(MPI_Comm world, trace::Timeline& timeline, const std::map<int, LinkSpec>& links)
      : timeline_(timeline) {
    CMLBED_MPI_CHECK(MPI_Comm_dup(world, &comm_));
    // Errors come back as codes (turned into exceptions), not as an abort.
    CMLBED_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    CMLBED_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    CMLBED_MPI_CHECK(MPI_Comm_size(comm_, &size_));
    const std::int64_t start = timeline_.now_ns();
    for (const auto& [peer, spec] : links) links_.emplace(peer, Link(spec, start));
    thread_ = std::thread([this] { run(); });
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
    // Receives nobody matched: cancel them (MPI_Cancel is well defined for receives).
    for (MPI_Request& request : requests_) {
      if (request == MPI_REQUEST_NULL) continue;
      MPI_Cancel(&request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    MPI_Comm_free(&comm_);
  }

  SendHandle send(int peer, MessageHeader header, Payload payload) {
    check_peer(peer);
    auto state = std::make_shared<TransferState>();
    state->peer = peer;
    state->kind = header.kind;
    state->t_start_ns = timeline_.now_ns();
    header.bytes = static_cast<std::int64_t>(payload.size());
    const auto link = links_.find(peer);
    header.chunk_bytes = static_cast<std::int64_t>(
        link == links_.end() ? Link::kUnshapedChunkBytes : link->second.max_chunk_bytes());
    {
      std::lock_guard<std::mutex> lock(mutex_);
      throw_if_failed();
      header.sequence = next_send_sequence_[{peer, static_cast<int>(header.kind)}]++;
      state->wire_header = header;
      state->message.header = header;
      state->message.payload = std::move(payload);
      new_sends_.push_back(state);
    }
    wake_.notify_all();
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
  struct OutChunk {
    std::shared_ptr<TransferState> owner;
    const void* data;
    int bytes;
    int tag;
    std::int64_t due_ns;
    bool observed;  // a header or a last chunk: its departure shows in the timeline
  };

  // Receives of one kind from one peer, completed strictly in order.
  struct Channel {
    int peer = 0;
    MessageKind kind = MessageKind::control;
    std::uint64_t expected_sequence = 0;
    std::deque<std::shared_ptr<TransferState>> waiting;
    bool active = false;
  };

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
    std::chrono::microseconds poll = kMinPollInterval;
    try {
      while (true) {
        std::vector<std::shared_ptr<TransferState>> sends, recvs;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          sends.swap(new_sends_);
          recvs.swap(new_recvs_);
          if (stopping_ && sends.empty() && out_chunks_pending() == 0 && sends_in_flight_ == 0) {
            return;
          }
        }
        for (auto& s : sends) schedule_send(s);
        for (auto& r : recvs) queue_receive(r);
        const bool released = release_due_chunks();
        const bool completed = test_requests();

        std::unique_lock<std::mutex> lock(mutex_);
        if (!new_sends_.empty() || !new_recvs_.empty() || released || completed) {
          poll = kMinPollInterval;
          continue;
        }
        if (stopping_ && out_chunks_pending() == 0 && sends_in_flight_ == 0) return;
        if (stopping_) {
          if (!stop_deadline_) stop_deadline_ = std::chrono::steady_clock::now() + kStopGrace;
          if (std::chrono::steady_clock::now() > *stop_deadline_) {
            abandoned_ = true;
            return;
          }
        }
        const auto has_work = [&] { return !new_sends_.empty() || !new_recvs_.empty() || stopping_; };
        const auto release = next_release_ns();
        const auto until_release = [&] {
          return std::chrono::nanoseconds(std::max<std::int64_t>(0, *release - timeline_.now_ns()));
        };
        if (!requests_.empty()) {
          // MPI needs to be called for transfers to move: poll, backing off while idle,
          // but wake in time for the next chunk the link lets go.
          auto wait = std::chrono::nanoseconds(poll);
          if (only_paced_sends()) {
            // Their completion matters little: the link lets the next chunks go at their
            // deadlines anyway, so wake for the next release, or once a millisecond after
            // the last chunk.
            wait = release ? std::chrono::nanoseconds(std::chrono::hours(1)) : kMaxPollInterval;
          } else if (const auto look = arrival_look_ns(); look && !bytes_moving()) {
            // Chunks of shaped messages come at the link's pace: look at that rhythm, not
            // at the unshaped one (each wake-up disturbs the computing thread).
            wait = std::max<std::chrono::nanoseconds>(wait, std::chrono::nanoseconds(*look));
          }
          if (release) wait = std::min(wait, until_release());
          wake_.wait_for(lock, wait, has_work);
          poll = std::min(poll * kPollBackoff, bytes_moving() ? kMaxPollWhileMoving : kMaxPollInterval);
        } else if (release) {
          wake_.wait_for(lock, until_release(), has_work);
        } else {
          wake_.wait(lock, has_work);  // nothing to do: park
        }
      }
    } catch (...) {
      fail_everything(std::current_exception());
    }
  }

  std::size_t out_chunks_pending() const {
    std::size_t n = 0;
    for (const auto& [peer, queue] : out_queues_) n += queue.size();
    return n;
  }

  // When the thread must wake next to release chunks (see chunk_pacing.hpp).
  std::optional<std::int64_t> next_release_ns() const {
    std::optional<std::int64_t> next;
    for (const auto& [peer, queue] : out_queues_) {
      if (queue.empty()) continue;
      const std::int64_t wake = group_release_ns(queue);
      if (!next || wake < *next) next = wake;
    }
    return next;
  }

  // Cuts the message into chunks and books each on the link now, so chunk departures
  // follow the token bucket with absolute deadlines (no drift from chained sleeps).
  void schedule_send(const std::shared_ptr<TransferState>& state) {
    auto& queue = out_queues_[state->peer];
    const auto link = links_.find(state->peer);
    const std::int64_t now = timeline_.now_ns();
    const auto book = [&](std::uint64_t bytes) {
      return link == links_.end() ? now : link->second.schedule(bytes, now).arrival_ns;
    };
    const auto kind = state->wire_header.kind;
    queue.push_back({state, &state->wire_header, static_cast<int>(sizeof(MessageHeader)),
                     header_tag(kind), book(sizeof(MessageHeader)), true});
    const auto& payload = state->message.payload;
    const auto chunk = static_cast<std::size_t>(state->wire_header.chunk_bytes);
    int chunks = 1;
    const std::size_t first_payload = queue.size();
    for (std::size_t offset = 0; offset < payload.size(); offset += chunk, ++chunks) {
      const std::size_t bytes = std::min(chunk, payload.size() - offset);
      queue.push_back({state, payload.data() + offset, static_cast<int>(bytes),
                       payload_tag(kind), book(bytes), offset + bytes == payload.size()});
    }
    // The header leaves first, so it can still carry the payload's booked rhythm.
    if (link != links_.end() && link->second.shaped() && chunks > 2) {
      state->wire_header.chunk_interval_ns =
          (queue.back().due_ns - queue[first_payload].due_ns) / (chunks - 2);
    }
    state->chunks_left = chunks;
    ++sends_in_flight_;
  }

  bool release_due_chunks() {
    bool released = false;
    const std::int64_t now = timeline_.now_ns();
    for (auto& [peer, queue] : out_queues_) {
      while (!queue.empty() && queue.front().due_ns <= now) {
        OutChunk chunk = queue.front();
        queue.pop_front();
        MPI_Request request;
        CMLBED_MPI_CHECK(MPI_Isend(chunk.data, chunk.bytes, MPI_BYTE, peer, chunk.tag, comm_,
                                   &request));
        const bool shaped = links_.count(peer) > 0 && links_.at(peer).shaped();
        add_request(request, shaped ? Traffic::paced : Traffic::moving,
                    [this, owner = chunk.owner] { on_chunk_sent(owner); });
        released = true;
      }
    }
    return released;
  }

  void on_chunk_sent(const std::shared_ptr<TransferState>& state) {
    if (--state->chunks_left > 0) return;
    record_transfer(trace::EventKind::send, *state, stats_.bytes_sent, stats_.messages_sent);
    --sends_in_flight_;
    state->finish();
  }

  void queue_receive(const std::shared_ptr<TransferState>& state) {
    Channel& channel = channels_[{state->peer, static_cast<int>(state->wire_header.kind)}];
    channel.peer = state->peer;
    channel.kind = state->wire_header.kind;
    channel.waiting.push_back(state);
    start_next_receive(channel);
  }

  void start_next_receive(Channel& channel) {
    if (channel.active || channel.waiting.empty()) return;
    channel.active = true;
    auto state = channel.waiting.front();
    MPI_Request request;
    CMLBED_MPI_CHECK(MPI_Irecv(&state->wire_header, static_cast<int>(sizeof(MessageHeader)),
                               MPI_BYTE, channel.peer, header_tag(channel.kind), comm_, &request));
    add_request(request, Traffic::waiting, [this, &channel, state] { on_header(channel, state); });
  }

  void on_header(Channel& channel, const std::shared_ptr<TransferState>& state) {
    state->t_start_ns = timeline_.now_ns();  // first byte in
    const MessageHeader& header = state->wire_header;
    if (header.kind != channel.kind || header.sequence != channel.expected_sequence) {
      throw std::runtime_error(
          "transport: message order violated on the " + std::string(to_string(channel.kind)) +
          " channel from rank " + std::to_string(channel.peer) + ": expected #" +
          std::to_string(channel.expected_sequence) + ", got " + header.describe());
    }
    if (header.bytes < 0 || (header.bytes > 0 && header.chunk_bytes <= 0)) {
      throw std::runtime_error("transport: corrupt header " + header.describe());
    }
    ++channel.expected_sequence;
    state->message.header = header;
    state->message.payload.resize(static_cast<std::size_t>(header.bytes));
    state->chunks_left = 0;
    for (std::int64_t offset = 0; offset < header.bytes; offset += header.chunk_bytes) {
      ++state->chunks_left;
    }
    if (state->chunks_left == 0) return finish_receive(channel, state);
    state->next_offset = 0;
    for (int i = 0; i < kReceiveWindow; ++i) post_next_chunk_receive(channel, state);
  }

  // Chunk receives are posted a window at a time (MPI keeps messages of one tag in
  // order), so that the requests MPI_Testsome scans stay few even for a message of
  // thousands of chunks.
  void post_next_chunk_receive(Channel& channel, const std::shared_ptr<TransferState>& state) {
    const MessageHeader& header = state->wire_header;
    if (state->next_offset >= header.bytes) return;
    const std::int64_t offset = state->next_offset;
    const auto bytes = static_cast<int>(std::min(header.chunk_bytes, header.bytes - offset));
    state->next_offset += bytes;
    MPI_Request request;
    CMLBED_MPI_CHECK(MPI_Irecv(state->message.payload.data() + offset, bytes, MPI_BYTE,
                               channel.peer, payload_tag(channel.kind), comm_, &request));
    const bool paced = header.chunk_interval_ns > 0;
    add_request(
        request, paced ? Traffic::arriving : Traffic::moving,
        [this, &channel, state] {
          if (--state->chunks_left == 0) return finish_receive(channel, state);
          post_next_chunk_receive(channel, state);
        },
        paced ? chunk_look_interval_ns(header.chunk_interval_ns, header.bytes - state->next_offset,
                                       kReceiveWindow * header.chunk_bytes,
                                       std::chrono::nanoseconds(kMaxPollInterval).count())
              : 0);
  }

  void finish_receive(Channel& channel, const std::shared_ptr<TransferState>& state) {
    record_transfer(trace::EventKind::recv, *state, stats_.bytes_received, stats_.messages_received);
    channel.waiting.pop_front();
    channel.active = false;
    state->finish();
    start_next_receive(channel);
  }

  // Puts a completed send or receive on the timeline and into the byte and message counters. The
  // lane is the link's direction: devices send up, the server sends down.
  void record_transfer(trace::EventKind kind, const TransferState& state, std::int64_t& bytes,
                       std::int64_t& messages) {
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
    std::lock_guard<std::mutex> lock(mutex_);
    bytes += h.bytes;
    ++messages;
  }

  // `moving`: bytes of a message are on their way (an unshaped chunk send, a payload
  // receive of an unshaped message); `waiting`: a receive posted ahead for a header that
  // may come much later; `paced`: a chunk sent on a shaped link, whose next chunk is due
  // only later; `arriving`: a payload receive of a shaped message, whose chunks come
  // one per header.chunk_interval_ns.
  enum class Traffic { moving, waiting, paced, arriving };

  void add_request(MPI_Request request, Traffic traffic, std::function<void()> on_complete,
                   std::int64_t look_ns = 0) {
    requests_.push_back(request);
    traffic_.push_back(traffic);
    look_ns_.push_back(look_ns);
    on_complete_.push_back(std::move(on_complete));
  }

  // The shortest look interval of the shaped messages' chunks arriving, if any.
  std::optional<std::int64_t> arrival_look_ns() const {
    std::optional<std::int64_t> look;
    for (std::size_t i = 0; i < traffic_.size(); ++i) {
      if (traffic_[i] == Traffic::arriving && (!look || look_ns_[i] < *look)) look = look_ns_[i];
    }
    return look;
  }

  bool bytes_moving() const {
    return std::find(traffic_.begin(), traffic_.end(), Traffic::moving) != traffic_.end();
  }

  bool only_paced_sends() const {
    return std::all_of(traffic_.begin(), traffic_.end(), [](Traffic t) { return t == Traffic::paced; });
  }

  // Drives MPI progress; runs the completion of every finished request.
  bool test_requests() {
    if (requests_.empty()) return false;
    int count = 0;
    indices_.resize(requests_.size());
    CMLBED_MPI_CHECK(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count,
                                  indices_.data(), MPI_STATUSES_IGNORE));
    if (count == MPI_UNDEFINED || count == 0) return false;
    std::vector<std::function<void()>> completions;
    for (int i = 0; i < count; ++i) completions.push_back(std::move(on_complete_[indices_[i]]));
    // Compact: completed requests were set to MPI_REQUEST_NULL by MPI_Testsome.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < requests_.size(); ++i) {
      if (requests_[i] == MPI_REQUEST_NULL) continue;
      requests_[kept] = requests_[i];
      traffic_[kept] = traffic_[i];
      look_ns_[kept] = look_ns_[i];
      on_complete_[kept] = std::move(on_complete_[i]);
      ++kept;
    }
    requests_.resize(kept);
    traffic_.resize(kept);
    look_ns_.resize(kept);
    on_complete_.resize(kept);
    for (auto& completion : completions) completion();
    return true;
  }

  void fail_everything(std::exception_ptr error) {
    std::vector<std::shared_ptr<TransferState>> pending;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      failure_ = error;
      pending.insert(pending.end(), new_sends_.begin(), new_sends_.end());
      pending.insert(pending.end(), new_recvs_.begin(), new_recvs_.end());
    }
    for (auto& [peer, queue] : out_queues_) {
      for (auto& chunk : queue) pending.push_back(chunk.owner);
    }
    for (auto& [key, channel] : channels_) {
      pending.insert(pending.end(), channel.waiting.begin(), channel.waiting.end());
    }
    for (auto& state : pending) state->finish(error);
  }

  trace::Timeline& timeline_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::map<int, Link> links_;

  // Shared between the caller's threads and the communication thread.
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::exception_ptr failure_;
  std::vector<std::shared_ptr<TransferState>> new_sends_, new_recvs_;
  std::map<std::pair<int, int>, std::uint64_t> next_send_sequence_;
  TransportStats stats_;

  // Owned by the communication thread.
  std::map<int, std::deque<OutChunk>> out_queues_;
  std::map<std::pair<int, int>, Channel> channels_;
  std::vector<MPI_Request> requests_;
  std::vector<Traffic> traffic_;
  std::vector<std::int64_t> look_ns_;  // per request: how often to look for an `arriving` one
  std::vector<std::function<void()>> on_complete_;
  std::vector<int> indices_;
  int sends_in_flight_ = 0;
  std::optional<std::chrono::steady_clock::time_point> stop_deadline_;
  bool abandoned_ = false;
  std::thread thread_;
};

Transport::Transport(MPI_Comm comm, trace::Timeline& timeline,
                     const std::map<int, LinkSpec>& outgoing_links)
    : impl_(std::make_unique<Impl>(comm, timeline, outgoing_links)) {}
Transport::~Transport() = default;

SendHandle Transport::send(int peer, MessageHeader header, Payload payload) {
  return impl_->send(peer, header, std::move(payload));
}
RecvHandle Transport::post_recv(int peer, MessageKind kind) { return impl_->post_recv(peer, kind); }
int Transport::rank() const { return impl_->rank(); }
int Transport::size() const { return impl_->size(); }
TransportStats Transport::stats() const { return impl_->stats(); }
double Transport::communication_thread_cpu_seconds() const {
  return impl_->thread_cpu_seconds();
}

}  // namespace cmlbed::net
