#include "rank_loop.hpp"

#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <cmath>

namespace sg4 = simgrid::s4u;
using simgrid::kernel::resource::Action;

namespace hopsim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Dates computed on the pass grid and dates reached by sleeping differ by rounding.
constexpr double kTimeEpsilon = 1e-12;

Sim* current_sim = nullptr;

}  // namespace

Sim::Sim(const PlatformSpec& platform, const WorkloadSpec& workload, std::unique_ptr<Overlay> overlay)
    : platform_(platform), pass_s_(platform.pass_us * 1e-6), overlay_(std::move(overlay))
{
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
  Message& m = pool_[id];
  m.hops++;
  transfers_++;
  // A permanent mailbox (one receiver set) starts every transfer at once, as an eager
  // MPI send does. Host-to-host Comm::sendto would be simpler, but 3.32 detaches those
  // and removes each finished one from a global list by linear search (simgrid-notes.md).
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
  const double recv_o = platform_.recv_overhead_us * 1e-6;
  const double send_o = platform_.send_overhead_us * 1e-6;
  const double per_byte = platform_.per_byte_overhead_ns * 1e-9;
  const double gap = platform_.gap_us * 1e-6;
  std::vector<uint32_t> out;
  r.mailbox->set_receiver(sg4::Actor::self());
  static void* sink;
  while (not done_) {
    double now = sg4::Engine::get_clock();
    align(r, now);
    double t_msg;
    int chosen = pick(r, &t_msg);
    double t_own = workload_->wants_pass(rank) ? r.t_free : kInf;
    double t_pass = std::min(t_msg, t_own);
    if (t_pass == kInf) {
      block(r, -1);
      continue;
    }
    if (t_pass > now + kTimeEpsilon) {
      // Under round-robin a message arriving meanwhile may be probed sooner: stay wakeable.
      if (platform_.reception == Reception::RoundRobin)
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
      if (found) {
        got_id = r.inbox[chosen];
        r.inbox.erase(r.inbox.begin() + chosen);
        got = &pool_[got_id];
      }
    }
    if (platform_.reception == Reception::RoundRobin)
      r.rr_pos = (r.rr_pos + 1) % list_size(r);
    double t = now + pass_s_;
    out.clear();
    // A copy: creating messages in the pass may move the pool.
    Message received;
    bool for_me = false;
    if (got) {
      t += recv_o + per_byte * static_cast<double>(got->bytes);
      // One transfer received, one taken out of the mailbox (the oldest posted).
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

}  // namespace hopsim
