// The ranks' polling loops (docs/model.md, docs/workloads.md): the pass structure of
// RayPlatform and latency_checker, relaying on an overlay, the reception policies, the
// NIC stage and the protocols. Each rank is a stackless coroutine (a few hundred bytes,
// not a SimGrid actor and its stack) resumed by one event loop in date order; the loop
// is the same whatever transport moves the bytes (transport.hpp).
#pragma once

#include "json_writer.hpp"
#include "message.hpp"
#include "nic.hpp"
#include "overlay.hpp"
#include "progress.hpp"
#include "spec.hpp"

#include <coroutine>
#include <exception>
#include <limits>
#include <map>
#include <unordered_map>
#include <memory>
#include <vector>

namespace hopsim {

class Sim;
class Transport;

// What a traffic pattern does in a rank's pass. Called from that rank's loop.
class Workload {
public:
  virtual ~Workload() = default;
  // True when the rank has work of its own for a pass now (it then does not idle).
  virtual bool wants_pass(int rank) = 0;
  // One pass of `rank`. `received` is the message for this rank picked up in this pass
  // (nullptr if none, or if the pass only relayed); `t` is when its processing ends.
  // Messages to send are created with Sim::create and appended to `out`.
  virtual void pass(Sim& sim, int rank, const Message* received, double t, std::vector<uint32_t>& out) = 0;
  // True for patterns that post their sends before they wait for receives (IMB Exchange's
  // Isend, Isend, Recv...): a pass with sends to post does not enter a blocking receive.
  virtual bool posts_before_receiving() const { return false; }
  // True for a rank whose receives are posted before its messages come (osu_bw's window
  // of MPI_Irecv): a rendezvous request is matched, and cleared to send, as it arrives,
  // not when a pass takes it.
  virtual bool posts_receives_early(int /*rank*/) const { return false; }
  // The only rank a blocking receive of `rank` takes its next message from (IMB Exchange's
  // MPI_Recv from the left, then from the right): kAnySource for a receive of any source,
  // kNoSource when the rank is not in a receive (its messages wait, unexpected; a
  // rendezvous request is not answered before its receive is posted).
  static constexpr int kAnySource = -1;
  static constexpr int kNoSource = -2;
  virtual int awaited_source(int /*rank*/) const { return kAnySource; }
  // The source a blocking receive that `rank` has posted waits for (kAnySource: any),
  // kNoSource when it has posted none. MPI's progress engine matches a rendezvous request
  // to a posted receive as the request arrives, and answers at once; a pattern whose ranks
  // find their messages by probing (RayPlatform, latency_checker) posts none.
  virtual int posted_receive(int /*rank*/) const { return kNoSource; }
  // Workloads that wait for their sends (IMB Exchange) are told when a transfer ends.
  virtual bool tracks_send_completion() const { return false; }
  virtual void on_send_complete(Sim&, const Message&) {}
  // Host computation in the pass just run (a reduction's arithmetic), in seconds: it
  // delays the pass's sends.
  virtual double compute_seconds(int /*rank*/) { return 0; }
  // The pass of `rank` ended at `t` (its sends posted): when a timed call returned.
  virtual void pass_done(Sim&, int /*rank*/, double /*t*/) {}
  // The JSON `results` object of this pattern, and per-rank lists where it has them.
  virtual void write_results(JsonWriter& json, const Sim& sim) const = 0;
  virtual bool has_per_rank() const { return false; }
  virtual void write_per_rank(JsonWriter&) const {}
  // The fraction of the run done, 0 to 1, in the pattern's own unit of work (exchanges,
  // iterations, repetitions; the sizes weigh the same): for a progress bar only.
  virtual double progress() const = 0;
};

// A rank's loop as a coroutine: created suspended, resumed by the event loop.
struct RankLoop {
  struct promise_type {
    std::exception_ptr error;
    RankLoop get_return_object() { return {std::coroutine_handle<promise_type>::from_promise(*this)}; }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_void() {}
    void unhandled_exception() { error = std::current_exception(); }
  };
  std::coroutine_handle<promise_type> handle;
};

struct RankState {
  std::coroutine_handle<RankLoop::promise_type> loop;
  uint32_t generation = 0;  // bumped at every suspension: older resume events are stale
  bool blocked = false;     // suspended and wakeable (wake() resumes it now)
  std::vector<uint32_t> inbox;  // visible or announced, not yet received, in arrival order
  double t_free = 0;            // the next pass cannot start before this
  size_t rr_pos = 0;            // the index, in the connection list, that the next pass probes
  double last_injection = -std::numeric_limits<double>::infinity();
  std::vector<int> connections;  // round-robin list; empty means all ranks, in order
  bool receiving = false;        // its pass took a message and waits for all of it
  double busy_until = 0;         // the end of the pass it is in (its library waits for it)
  // On-node rendezvous data it is copying in (Sim::serve): its library does nothing else
  // meanwhile; what it would have done waits in `deferred` until the rank next waits.
  int copying = 0;
  std::vector<uint32_t> deferred;
};

// One entry of the event loop: resume a rank, start a transfer its NIC stage released,
// or a step of the transport.
struct Event {
  enum Kind : uint8_t { Resume, Start, Transport, Serve };
  double date;
  uint64_t seq;  // other ties on date run in scheduling order: deterministic
  uint32_t arg;  // the rank (Resume) or the message (Start, Transport)
  uint32_t generation;
  Kind kind;
  // At one date the transport's steps come first: a message delivered at the date of a
  // pass is seen by that pass, as SimGrid (network events before actors) has it.
  bool operator>(const Event& o) const
  {
    if (date != o.date)
      return date > o.date;
    if ((kind == Transport) != (o.kind == Transport))
      return o.kind == Transport;
    return seq > o.seq;
  }
};

class Sim {
public:
  Sim(const PlatformSpec& platform, const WorkloadSpec& workload, std::unique_ptr<Overlay> overlay);
  ~Sim();
  Sim(const Sim&) = delete;
  Sim& operator=(const Sim&) = delete;
  // Runs the workload to completion on the transport.
  void run(Workload& workload, Transport& transport);
  // Where run() publishes the workload's progress (every 256 events, and 1 at
  // the end); none by default.
  void publish_progress_to(ProgressCounter* counter) { progress_ = counter; }

  // A new message from `origin` to `final_dst`, routed on the overlay if there is one.
  uint32_t create(int origin, int final_dst, int64_t bytes, int kind, int64_t seq);
  Message& message(uint32_t id) { return pool_[id]; }
  // The bytes the transfer in flight carries: the message, a rendezvous's first fragment
  // (with its request) or the rest (after the answer), none for the answer itself.
  int64_t wire_bytes(const Message& m) const;
  // Whether the transfer in flight crosses its nodes' limiters (PlatformSpec::limiter_scope),
  // the backbone (backbone_scope), and so leaves from the nodes' second hosts, whose
  // routes hold what serves rendezvous messages only (platform_builder.hpp).
  bool through_limiter(const Message& m) const;
  bool through_backbone(const Message& m) const;
  bool through_bulk_host(const Message& m) const;
  // A rendezvous's request (with its first bytes) or its data: not its clear-to-send.
  bool rendezvous_bytes(const Message& m) const;
  void release(uint32_t id) { pool_.release(id); }
  // Ends the simulation: no rank runs again.
  void finish();
  // Resumes a rank suspended waiting for something to happen.
  void wake(int rank);

  int ranks() const { return static_cast<int>(ranks_.size()); }
  // Where a rank runs: the placement's map (placement.hpp), the one answer everything uses.
  int node_of(int rank) const { return node_[static_cast<size_t>(rank)]; }
  const std::vector<int>& node_map() const { return node_; }
  int64_t transfers() const { return transfers_; }
  const std::vector<int64_t>& relays() const { return relays_; }
  const Overlay* overlay() const { return overlay_.get(); }
  int64_t delivered_hops() const { return delivered_hops_; }
  int64_t delivered_messages() const { return delivered_messages_; }
  double finish_time() const { return finish_time_; }
  // One transfer, recorded when it is handed to the rank (WorkloadSpec::trace): a
  // message's bytes, a rendezvous's request or its answer, one hop of it.
  struct TraceRow {
    double staged, started, arrived, delivered;  // seconds
    int phase, from, to;                          // the direction it travels
    int64_t bytes, seq;
  };
  const std::vector<TraceRow>& trace() const { return trace_; }

  // For transports: the current date, events, and the end of a transfer.
  double now() const;
  void schedule(double date, Event::Kind kind, uint32_t arg, uint32_t generation = 0);
  // The transfer of message `id` delivered its last byte now.
  void transfer_done(uint32_t id);
  bool done() const { return done_; }
  // Pops and runs every event due at or before `until` (the transport's clock), in order;
  // returns the date of the next event (infinity if none).
  double run_due(double until);
  void set_now(double t) { now_ = t; }

private:
  RankLoop rank_main(int rank);
  void align(RankState& r, double now) const;
  size_t position(const RankState& r, int source) const;
  size_t list_size(const RankState& r) const;
  double grid_at_or_after(const RankState& r, double t) const;
  int pick(const RankState& r, double* when) const;
  int next_hop(int origin, int cur, int dst);
  void inject(uint32_t id);
  double stage(uint32_t id, int phase, int src, int dst, int64_t bytes, double t);
  bool is_rendezvous(const Message& m) const;
  // A transfer through a bucket and a limiter or backbone: the date it starts, its rate.
  double through_bucket_and_limiter(Message& m, double release);
  // On-node rendezvous data: copied by its receiver in one synchronous call (serve).
  bool copied_by_receiver(const Message& m) const;
  void start_transfer(uint32_t id);
  void announce(uint32_t id, double visible_at);
  // Suspension points of a rank's loop: until `date`, wakeable or not.
  void suspend_until(RankState& r, double date, bool wakeable);
  void dispatch(const Event& e);

  PlatformSpec platform_;
  // A rank's pass, and its host costs' factor: on an oversubscribed node the busy-polling
  // ranks share the cores, each getting cores/ranks of one (1 elsewhere). Per node, as
  // an explicit placement may load nodes unevenly.
  double pass_of(const RankState& r) const { return node_pass_s_[node_[static_cast<size_t>(&r - ranks_.data())]]; }
  std::vector<int> node_;  // rank -> node (placement.hpp)
  std::vector<double> node_stretch_, node_pass_s_;
  NicStage nic_;
  std::unique_ptr<Overlay> overlay_;
  MessagePool pool_;
  std::vector<RankState> ranks_;
  std::vector<int64_t> relays_;
  std::vector<Event> events_;  // a min-heap on (date, seq)
  uint64_t event_seq_ = 0;
  double now_ = 0;
  Workload* workload_ = nullptr;
  Transport* transport_ = nullptr;
  bool done_ = false;
  double finish_time_ = 0;
  int64_t transfers_ = 0;
  int64_t delivered_hops_ = 0;
  int64_t delivered_messages_ = 0;
  ProgressCounter* progress_ = nullptr;
  uint64_t dispatched_ = 0;
  bool tracing_ = false;
  std::vector<TraceRow> trace_;
  // A connection (rank pair, one direction) delivers its transfers in the order they were
  // staged, as TCP and MPI's non-overtaking rule do: a transfer the transport finished
  // before an earlier one of its connection waits for it. Kept while transfers are in flight.
  struct Connection {
    uint64_t staged = 0, delivered = 0;
    std::map<uint64_t, uint32_t> held;  // order -> message finished out of order
  };
  std::unordered_map<uint64_t, Connection> connections_;
  // Whether a connection's transfers can end out of order: not on the queue transport's
  // FIFO links when nothing before them reorders (no per-message noise, race jitter,
  // pacing, or control messages passing the NIC's queue); there the bookkeeping, three
  // hash-table operations per transfer, is skipped (docs/performance.md).
  bool ordered_ = true;
  static uint64_t connection_key(int from, int to)
  {
    return (static_cast<uint64_t>(static_cast<uint32_t>(from)) << 32) | static_cast<uint32_t>(to);
  }
  void deliver(uint32_t id);
  bool receive_posted(uint32_t id) const;
  void serve(uint32_t id, double at);
};

}  // namespace hopsim
