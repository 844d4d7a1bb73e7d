#include "rank_loop.hpp"

#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <cmath>
#include <functional>

namespace sg4 = simgrid::s4u;
using simgrid::kernel::resource::Action;

namespace hopsim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Dates computed on the pass grid and dates reached by sleeping differ by rounding.
constexpr double kTimeEpsilon = 1e-12;

Sim* current_sim = nullptr;

// What a staged transfer carries: the message itself, or a rendezvous's request to send
// (sender to receiver) or clear to send (receiver to sender), both empty.
enum Phase { kData = 0, kRequestToSend = 1, kClearToSend = 2 };

}  // namespace

Sim::Sim(const PlatformSpec& platform, const WorkloadSpec& workload, std::unique_ptr<Overlay> overlay)
    : platform_(platform), pass_s_(platform.pass_us * 1e-6), per_node_(workload.ranks_per_node),
      nic_(platform, platform.nodes, workload.seed), overlay_(std::move(overlay))
{
  // Busy-polling ranks share a node's cores fairly: each gets cores/ranks of a core, so
  // its CPU costs (passes, overheads) take ranks/cores times longer.
  if (platform_.oversubscribe && workload.ranks_per_node > platform_.cores)
    cpu_stretch_ = static_cast<double>(workload.ranks_per_node) / static_cast<double>(platform_.cores);
  pass_s_ *= cpu_stretch_;
  staged_ = nic_.active() || platform_.eager_threshold_bytes >= 0 || platform_.probe != Probe::Arrival;
  ranks_.resize(workload.ranks);
  relays_.assign(workload.ranks, 0);
  if (platform_.reception == Reception::RoundRobin && overlay_)
    for (int r = 0; r < workload.ranks; r++)
      ranks_[r].connections = connection_list(*overlay_, r);
}

void Sim::run(Workload& workload, const std::vector<sg4::Host*>& node_hosts)
{
  workload_ = &workload;
  current_sim = this;
  // A transfer "arrives" when SimGrid's network action ends. Nobody waits on the
  // transfer itself (that would cost the receiver a blocking call per message and
  // serialize its receptions); the arrival is pushed into the receiver's inbox here,
  // in the kernel, and the receiver woken if it sleeps.
  static bool connected = false;
  if (not connected) {
    connected = true;
    sg4::Link::on_communication_state_change_cb([](simgrid::kernel::resource::NetworkAction& action,
                                                   Action::State /*previous*/) {
      // NetworkAction's definition is not installed; it derives from Action alone.
      const auto& a = reinterpret_cast<const Action&>(action);
      if (current_sim != nullptr && a.get_state() == Action::State::FINISHED)
        current_sim->on_transfer_done(a.get_activity());
    });
  }
  int per_node = static_cast<int>(ranks_.size()) / static_cast<int>(node_hosts.size());
  for (size_t r = 0; r < ranks_.size(); r++) {
    ranks_[r].host = node_hosts[r / per_node];
    ranks_[r].wake = sg4::Semaphore::create(0);
    ranks_[r].mailbox = sg4::Mailbox::by_name("rank-" + std::to_string(r));
  }
  for (size_t r = 0; r < ranks_.size(); r++) {
    int rank = static_cast<int>(r);
    sg4::Actor::create("rank-" + std::to_string(r), ranks_[r].host, [this, rank] { rank_main(rank); });
  }
  if (staged_) {
    timer_wake_ = sg4::Semaphore::create(0);
    sg4::Actor::create("nic-timer", node_hosts[0], [this] { timer_main(); });
  }
  sg4::Engine::get_instance()->run();
  current_sim = nullptr;
}

int Sim::next_hop(int origin, int cur, int dst)
{
  if (not overlay_ || cur == dst)
    return dst;
  return overlay_->next_hop(origin, cur, dst);
}

uint32_t Sim::create(int origin, int final_dst, int64_t bytes, int kind, int64_t seq)
{
  uint32_t id = pool_.acquire();
  Message& m = pool_[id];
  m.origin = origin;
  m.final_dst = final_dst;
  m.from = origin;
  m.to = next_hop(origin, origin, final_dst);
  m.bytes = bytes;
  m.kind = kind;
  m.seq = seq;
  return id;
}

void Sim::inject(uint32_t id)
{
  if (staged_) {
    inject_staged(id);
    return;
  }
  Message& m = pool_[id];
  m.hops++;
  transfers_++;
  // A permanent mailbox (one receiver set) starts every transfer at once, as an eager
  // MPI send does. Host-to-host Comm::sendto would be simpler, but 3.32 detaches those
  // and removes each finished one from a global list by linear search (docs/model.md).
  static char payload;
  m.transfer = ranks_[m.to].mailbox->put_async(&payload, static_cast<uint64_t>(m.bytes));
  in_flight_.emplace(m.transfer->get_impl(), id);
}

// Finished transfers are still referenced by the sender and, through the mailbox, by
// the receiver. Waiting on them (they are done: it returns at once) lets SimGrid drop
// them from the actor's list of activities; test() would leave them there.
void Sim::complete_transfers(RankState& r)
{
  for (auto& c : r.finished_sends)
    c->wait();
  r.finished_sends.clear();
  size_t kept = 0;
  for (auto& c : r.taken) {
    if (in_flight_.count(c->get_impl()) != 0)
      r.taken[kept++] = c;  // the oldest posted transfer may still be on its way
    else
      c->wait();
  }
  r.taken.resize(kept);
}

void Sim::on_transfer_done(const void* activity)
{
  auto it = in_flight_.find(activity);
  if (it == in_flight_.end())
    return;
  uint32_t id = it->second;
  in_flight_.erase(it);
  if (staged_) {
    on_staged_done(id);
    return;
  }
  Message& m = pool_[id];
  m.arrival = sg4::Engine::get_clock();
  ranks_[m.from].finished_sends.push_back(std::move(m.transfer));
  ranks_[m.to].inbox.push_back(id);
  wake(m.to);
  if (workload_->tracks_send_completion()) {
    workload_->on_send_complete(*this, m);
    wake(m.from);
  }
}

void Sim::wake(int rank)
{
  RankState& r = ranks_[rank];
  if (r.blocked) {
    r.blocked = false;
    r.wake->release();
  }
}

void Sim::finish()
{
  done_ = true;
  finish_time_ = sg4::Engine::get_clock();
  for (size_t r = 0; r < ranks_.size(); r++)
    wake(static_cast<int>(r));
  if (staged_)
    wake_timer();
}

void Sim::block(RankState& r, double timeout)
{
  r.blocked = true;
  if (timeout < 0)
    r.wake->acquire();
  else
    r.wake->acquire_timeout(timeout);
  r.blocked = false;
}

size_t Sim::list_size(const RankState& r) const
{
  return r.connections.empty() ? ranks_.size() : r.connections.size();
}

size_t Sim::position(const RankState& r, int source) const
{
  if (r.connections.empty())
    return static_cast<size_t>(source);
  auto it = std::lower_bound(r.connections.begin(), r.connections.end(), source);
  return static_cast<size_t>(it - r.connections.begin());
}

// While a rank idles its passes go on: move its pass grid up to the first pass at or
// after `now`, advancing the round-robin pointer by one source per idle pass.
void Sim::align(RankState& r, double now) const
{
  if (r.t_free + kTimeEpsilon >= now)
    return;
  if (pass_s_ <= 0) {
    r.t_free = now;
    return;
  }
  double k = std::ceil((now - r.t_free) / pass_s_ - 1e-9);
  r.t_free += k * pass_s_;
  r.rr_pos = static_cast<size_t>((r.rr_pos + static_cast<uint64_t>(k)) % list_size(r));
}

// The inbox entry the rank will receive first, and the date of that pass.
int Sim::pick(const RankState& r, double* when) const
{
  *when = kInf;
  if (r.inbox.empty())
    return -1;
  if (platform_.reception == Reception::AnySource) {
    *when = r.t_free;
    return 0;
  }
  // Round-robin: the pass that probes source position p comes (p - rr_pos) mod m passes
  // from now; every message in the inbox has already arrived.
  size_t m = list_size(r);
  size_t best_k = m;
  int best = -1;
  for (size_t i = 0; i < r.inbox.size(); i++) {
    size_t p = position(r, pool_[r.inbox[i]].from);
    size_t k = (p + m - r.rr_pos) % m;
    if (k < best_k) {
      best_k = k;
      best = static_cast<int>(i);
    }
  }
  *when = r.t_free + static_cast<double>(best_k) * pass_s_;
  return best;
}

void Sim::rank_main(int rank)
{
  RankState& r = ranks_[rank];
  const double recv_o = platform_.recv_overhead_us * 1e-6 * cpu_stretch_;
  const double send_o = platform_.send_overhead_us * 1e-6 * cpu_stretch_;
  const double per_byte = platform_.per_byte_overhead_ns * 1e-9 * cpu_stretch_;
  const double gap = platform_.gap_us * 1e-6;
  std::vector<uint32_t> out;
  if (not staged_)
    r.mailbox->set_receiver(sg4::Actor::self());
  static void* sink;
  while (not done_) {
    double now = sg4::Engine::get_clock();
    align(r, now);
    double t_msg;
    int chosen = staged_ ? pick_staged(r, &t_msg) : pick(r, &t_msg);
    double t_own = workload_->wants_pass(rank) ? r.t_free : kInf;
    double t_pass = std::min(t_msg, t_own);
    if (t_pass == kInf) {
      block(r, -1);
      continue;
    }
    if (t_pass > now + kTimeEpsilon) {
      // Under round-robin a message arriving meanwhile may be probed sooner, and on the
      // staged path one may become visible sooner: stay wakeable, unless the pass is the
      // next one on the grid (no pass can come before it).
      bool sooner_possible = staged_ && t_pass > r.t_free + kTimeEpsilon;
      if (platform_.reception == Reception::RoundRobin || sooner_possible)
        block(r, t_pass - now);
      else
        sg4::this_actor::sleep_for(t_pass - now);
      continue;
    }
    // A pass starts now: probe, receive at most one message, process, own work, send.
    Message* got = nullptr;
    uint32_t got_id = 0;
    if (chosen >= 0) {
      bool found = true;
      if (platform_.reception == Reception::RoundRobin) {
        // The chosen message is probed in this pass only if it sits at the pointer.
        found = position(r, pool_[r.inbox[chosen]].from) == r.rr_pos;
      }
      if (staged_) {
        const Message& m = pool_[r.inbox[chosen]];
        found = found && m.visible_at <= now + kTimeEpsilon;
        // Sends to post first: the blocking receive waits for the next pass.
        if (not m.complete && t_own <= now + kTimeEpsilon && workload_->posts_before_receiving())
          found = false;
      }
      if (found) {
        got_id = r.inbox[chosen];
        r.inbox.erase(r.inbox.begin() + chosen);
        got = &pool_[got_id];
      }
    }
    if (platform_.reception == Reception::RoundRobin)
      r.rr_pos = (r.rr_pos + 1) % list_size(r);
    // A message seen before it has fully arrived is taken by a blocking receive.
    if (got != nullptr && staged_) {
      if (not await_complete(r, got_id))
        break;
      now = sg4::Engine::get_clock();
    }
    double t = now + pass_s_;
    out.clear();
    // A copy: creating messages in the pass may move the pool.
    Message received;
    bool for_me = false;
    if (got) {
      t += recv_o + per_byte * static_cast<double>(got->bytes);
      // One transfer received, one taken out of the mailbox (the oldest posted).
      if (not staged_)
        r.taken.push_back(r.mailbox->get_async(&sink));
      if (got->final_dst != rank) {
        // A relay: forwarded in the same pass.
        relays_[rank]++;
        got->from = rank;
        got->to = next_hop(got->origin, rank, got->final_dst);
        out.push_back(got_id);
      } else {
        delivered_hops_ += got->hops;
        delivered_messages_++;
        received = *got;
        for_me = true;
        pool_.release(got_id);
      }
    }
    workload_->pass(*this, rank, for_me ? &received : nullptr, t, out);
    for (uint32_t id : out) {
      t += send_o + per_byte * static_cast<double>(pool_[id].bytes);
      t = std::max(t, r.last_injection + gap);
      double clock = sg4::Engine::get_clock();
      if (t > clock + kTimeEpsilon)
        sg4::this_actor::sleep_for(t - clock);
      r.last_injection = t;
      inject(id);
    }
    r.t_free = t;
    if (not r.finished_sends.empty() || not r.taken.empty())
      complete_transfers(r);
  }
  complete_transfers(r);
}

// ---- The staged path ------------------------------------------------------------------
// Transfers leave when the sender's NIC stage lets them go (a timer actor starts them
// host to host), reach the rank when the receiver's NIC stage hands them over, and are
// visible to a probe from a date that depends on the probe mode. Off unless a mechanism
// that needs it is on, so that the plain path above stays as it was.

double Sim::grid_at_or_after(const RankState& r, double t) const
{
  if (t <= r.t_free + kTimeEpsilon)
    return r.t_free;
  if (pass_s_ <= 0)
    return t;
  return r.t_free + std::ceil((t - r.t_free) / pass_s_ - 1e-9) * pass_s_;
}

int Sim::pick_staged(const RankState& r, double* when) const
{
  *when = kInf;
  int best = -1;
  size_t m = list_size(r);
  for (size_t i = 0; i < r.inbox.size(); i++) {
    const Message& msg = pool_[r.inbox[i]];
    double t;
    if (platform_.reception == Reception::AnySource) {
      t = grid_at_or_after(r, msg.visible_at);
    } else {
      size_t k = (position(r, msg.from) + m - r.rr_pos) % m;
      t = r.t_free + static_cast<double>(k) * pass_s_;
      if (pass_s_ <= 0) {
        t = std::max(t, msg.visible_at);
      } else if (t + kTimeEpsilon < msg.visible_at) {
        // The pointer comes back to this source every m passes.
        double cycle = static_cast<double>(m) * pass_s_;
        t += std::ceil((msg.visible_at - t) / cycle - 1e-9) * cycle;
      }
    }
    if (t < *when) {
      *when = t;
      best = static_cast<int>(i);
    }
  }
  return best;
}

void Sim::inject_staged(uint32_t id)
{
  Message& m = pool_[id];
  m.hops++;
  transfers_++;
  double now = sg4::Engine::get_clock();
  m.complete = false;
  m.announced = false;
  m.matched = false;
  m.rts_arrived = false;
  bool rendezvous = platform_.eager_threshold_bytes >= 0 && m.bytes > platform_.eager_threshold_bytes;
  double release = rendezvous ? stage(id, kRequestToSend, m.from, m.to, 0, now, m.from)
                              : stage(id, kData, m.from, m.to, m.bytes, now, m.from);
  if (platform_.probe == Probe::Post) {
    announce(id, now);
  } else if (platform_.probe == Probe::Header && not rendezvous) {
    // The header is the first byte: it arrives one path latency after the transfer starts.
    std::vector<sg4::Link*> links;
    double latency = 0;
    ranks_[m.from].host->route_to(ranks_[m.to].host, links, &latency);
    announce(id, release + latency);
  }
}

void Sim::announce(uint32_t id, double visible_at)
{
  Message& m = pool_[id];
  m.visible_at = visible_at;
  m.announced = true;
  ranks_[m.to].inbox.push_back(id);
  wake(m.to);
}

double Sim::stage(uint32_t id, int phase, int src, int dst, int64_t bytes, double t, int actor_rank)
{
  Message& m = pool_[id];
  m.phase = phase;
  m.spread = 0;
  double release = t;
  if (nic_.active() && node_of(src) != node_of(dst))
    release = nic_.egress(node_of(src), t, bytes, &m.spread);
  if (actor_rank >= 0 && release <= sg4::Engine::get_clock()) {
    // Called from a rank's actor and free to go now: that actor starts it (no round trip
    // through the timer actor) and completes it later.
    start_transfer(id, src, dst, bytes, actor_rank);
    return release;
  }
  starts_.push_back(Start{release, start_seq_++, id, src, dst, bytes});
  std::push_heap(starts_.begin(), starts_.end(), std::greater<>());
  wake_timer();
  return release;
}

void Sim::start_transfer(uint32_t id, int src, int dst, int64_t bytes, int actor_rank)
{
  sg4::CommPtr c = sg4::Comm::sendto_init(ranks_[src].host, ranks_[dst].host);
  c->set_payload_size(static_cast<uint64_t>(bytes));
  c->start();
  Message& m = pool_[id];
  m.transfer = c;
  m.started_by = actor_rank;
  in_flight_.emplace(c->get_impl(), id);
}

void Sim::on_staged_done(uint32_t id)
{
  Message& m = pool_[id];
  // Completed (waited on) by the actor that started it.
  if (m.started_by >= 0)
    ranks_[m.started_by].finished_sends.push_back(std::move(m.transfer));
  else
    timer_finished_.push_back(std::move(m.transfer));
  int src = m.phase == kClearToSend ? m.to : m.from;
  int dst = m.phase == kClearToSend ? m.from : m.to;
  double at = sg4::Engine::get_clock();
  if (nic_.active() && node_of(src) != node_of(dst))
    at = nic_.ingress(node_of(dst), at, m.phase == kData ? m.bytes : 0, m.spread);
  switch (m.phase) {
    case kRequestToSend:
      m.rts_arrived = true;
      if (m.matched)
        stage(id, kClearToSend, m.to, m.from, 0, at, -1);
      else if (not m.announced)
        announce(id, at);
      break;
    case kClearToSend:
      // The sender's library moves the data as soon as the receiver cleared it.
      stage(id, kData, m.from, m.to, m.bytes, at, -1);
      break;
    default:
      m.complete = true;
      m.complete_at = at;
      m.arrival = at;
      if (not m.announced)
        announce(id, at);
      else
        wake(m.to);
      if (workload_->tracks_send_completion()) {
        workload_->on_send_complete(*this, m);
        wake(m.from);
      }
  }
}

// The blocking receive of a message the probe saw early: a rendezvous request is
// answered (clear to send), then the rank waits for the last byte.
bool Sim::await_complete(RankState& r, uint32_t id)
{
  Message& m = pool_[id];
  if (m.phase == kRequestToSend && not m.matched) {
    m.matched = true;
    if (m.rts_arrived)
      stage(id, kClearToSend, m.to, m.from, 0, sg4::Engine::get_clock(), m.to);
  }
  for (;;) {
    if (done_)
      return false;
    double now = sg4::Engine::get_clock();
    if (not m.complete)
      block(r, -1);
    else if (m.complete_at > now + kTimeEpsilon)
      sg4::this_actor::sleep_for(m.complete_at - now);
    else
      return true;
  }
}

void Sim::wake_timer()
{
  if (timer_blocked_) {
    timer_blocked_ = false;
    timer_wake_->release();
  }
}

void Sim::timer_main()
{
  while (not done_) {
    for (auto& c : timer_finished_)
      c->wait();
    timer_finished_.clear();
    double now = sg4::Engine::get_clock();
    if (starts_.empty() || starts_.front().date > now + kTimeEpsilon) {
      timer_blocked_ = true;
      if (starts_.empty())
        timer_wake_->acquire();
      else
        timer_wake_->acquire_timeout(starts_.front().date - now);
      timer_blocked_ = false;
      continue;
    }
    std::pop_heap(starts_.begin(), starts_.end(), std::greater<>());
    Start s = starts_.back();
    starts_.pop_back();
    start_transfer(s.id, s.src, s.dst, s.bytes, -1);
  }
  for (auto& c : timer_finished_)
    c->wait();
}

}  // namespace hopsim
