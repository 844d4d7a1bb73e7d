// The ranks' polling loops on the simulated platform: one actor per rank, the pass
// structure of RayPlatform and latency_checker (docs/model.md, docs/workloads.md), message
// transfers, relaying on an overlay, and the reception policies.
#pragma once

#include "json_writer.hpp"
#include "message.hpp"
#include "nic.hpp"
#include "overlay.hpp"
#include "spec.hpp"

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include <limits>
#include <memory>
#include <unordered_map>
#include <vector>

namespace hopsim {

class Sim;

// What a traffic pattern does in a rank's pass. Called from that rank's actor.
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
  // Workloads that wait for their sends (IMB Exchange) are told when a transfer ends.
  virtual bool tracks_send_completion() const { return false; }
  virtual void on_send_complete(Sim&, const Message&) {}
  // The JSON `results` object of this pattern, and per-rank lists where it has them.
  virtual void write_results(JsonWriter& json, const Sim& sim) const = 0;
  virtual bool has_per_rank() const { return false; }
  virtual void write_per_rank(JsonWriter&) const {}
};

struct RankState {
  simgrid::s4u::Host* host = nullptr;
  simgrid::s4u::SemaphorePtr wake;
  bool blocked = false;
  std::vector<uint32_t> inbox;  // arrived, not yet received, in arrival order
  double t_free = 0;            // the next pass cannot start before this
  size_t rr_pos = 0;            // the index, in the connection list, that the next pass probes
  double last_injection = -std::numeric_limits<double>::infinity();
  std::vector<int> connections;  // round-robin list; empty means all ranks, in order
  // Transfers go through SimGrid mailboxes (see Sim::inject); these complete them.
  simgrid::s4u::Mailbox* mailbox = nullptr;
  std::vector<simgrid::s4u::CommPtr> finished_sends;  // to test, which frees them
  std::vector<simgrid::s4u::CommPtr> taken;           // taken from the mailbox, to test
};

class Sim {
public:
  Sim(const PlatformSpec& platform, const WorkloadSpec& workload, std::unique_ptr<Overlay> overlay);
  // Creates the actors on `node_hosts` (block placement) and runs to completion.
  void run(Workload& workload, const std::vector<simgrid::s4u::Host*>& node_hosts);

  // A new message from `origin` to `final_dst`, routed on the overlay if there is one.
  uint32_t create(int origin, int final_dst, int64_t bytes, int kind, int64_t seq);
  Message& message(uint32_t id) { return pool_[id]; }
  void release(uint32_t id) { pool_.release(id); }
  // Ends the simulation: every rank leaves its loop.
  void finish();
  // Wakes a rank blocked waiting for something to happen.
  void wake(int rank);

  int ranks() const { return static_cast<int>(ranks_.size()); }
  int64_t transfers() const { return transfers_; }
  const std::vector<int64_t>& relays() const { return relays_; }
  int64_t delivered_hops() const { return delivered_hops_; }
  int64_t delivered_messages() const { return delivered_messages_; }
  double finish_time() const { return finish_time_; }

private:
  void rank_main(int rank);
  void align(RankState& r, double now) const;
  void block(RankState& r, double timeout);
  size_t position(const RankState& r, int source) const;
  size_t list_size(const RankState& r) const;
  int pick(const RankState& r, double* when) const;
  void inject(uint32_t id);
  void complete_transfers(RankState& r);
  void on_transfer_done(const void* activity);
  int next_hop(int origin, int cur, int dst);
  // The staged path: transfers started by one timer actor once the NIC stage lets them go.
  int node_of(int rank) const { return rank / per_node_; }
  double grid_at_or_after(const RankState& r, double t) const;
  int pick_staged(const RankState& r, double* when) const;
  void inject_staged(uint32_t id);
  // actor_rank: the rank whose actor calls (it may start the transfer itself), or -1
  // from the kernel's callbacks.
  double stage(uint32_t id, int phase, int src, int dst, int64_t bytes, double t, int actor_rank);
  void start_transfer(uint32_t id, int src, int dst, int64_t bytes, int actor_rank);
  void announce(uint32_t id, double visible_at);
  void on_staged_done(uint32_t id);
  bool await_complete(RankState& r, uint32_t id);
  void timer_main();
  void wake_timer();

  PlatformSpec platform_;
  double pass_s_;
  double cpu_stretch_ = 1;  // oversubscribed nodes: ranks per core
  int per_node_ = 1;
  bool staged_ = false;
  NicStage nic_;
  struct Start {
    double date;
    uint64_t seq;
    uint32_t id;
    int src, dst;
    int64_t bytes;
    bool operator>(const Start& o) const { return date != o.date ? date > o.date : seq > o.seq; }
  };
  std::vector<Start> starts_;  // a min-heap on (date, seq)
  uint64_t start_seq_ = 0;
  simgrid::s4u::SemaphorePtr timer_wake_;
  bool timer_blocked_ = false;
  std::vector<simgrid::s4u::CommPtr> timer_finished_;
  std::unique_ptr<Overlay> overlay_;
  MessagePool pool_;
  std::unordered_map<const void*, uint32_t> in_flight_;
  std::vector<RankState> ranks_;
  std::vector<int64_t> relays_;
  Workload* workload_ = nullptr;
  bool done_ = false;
  double finish_time_ = 0;
  int64_t transfers_ = 0;
  int64_t delivered_hops_ = 0;
  int64_t delivered_messages_ = 0;
};

}  // namespace hopsim
