#include "rank_loop.hpp"

#include "placement.hpp"
#include "transport.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace hopsim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Dates computed on the pass grid and dates reached by sleeping differ by rounding.
constexpr double kTimeEpsilon = 1e-12;

// What a transfer carries: the message itself, or a rendezvous's request to send
// (sender to receiver) or clear to send (receiver to sender), both empty.
enum Phase { kData = 0, kRequestToSend = 1, kClearToSend = 2 };

// The suspension of a rank's loop; what resumes it was scheduled before.
struct Park {
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<>) const noexcept {}
  void await_resume() const noexcept {}
};

}  // namespace

Sim::Sim(const PlatformSpec& platform, const WorkloadSpec& workload, std::unique_ptr<Overlay> overlay)
    : platform_(platform), node_(place_ranks(workload)), nic_(platform, platform.nodes, workload.seed),
      overlay_(std::move(overlay)), tracing_(workload.trace)
{
  // Busy-polling ranks share a node's cores fairly: each gets cores/ranks of a core, so
  // its CPU costs (passes, overheads) take ranks/cores times longer.
  std::vector<int> count = ranks_on_nodes(node_);
  node_stretch_.assign(count.size(), 1.0);
  node_pass_s_.assign(count.size(), platform.pass_us * 1e-6);
  for (size_t n = 0; n < count.size(); n++) {
    if (platform_.oversubscribe && count[n] > platform_.cores)
      node_stretch_[n] = static_cast<double>(count[n]) / static_cast<double>(platform_.cores);
    node_pass_s_[n] *= node_stretch_[n];
  }
  // All nodes on one machine (an emulated cluster): with n ranks per machine core, a
  // yielding rank gets the core once every n turns, so its pass is at least n turns.
  if (platform_.machine_cores > 0 && workload.ranks > platform_.machine_cores) {
    const double turns = static_cast<double>(workload.ranks) / static_cast<double>(platform_.machine_cores);
    for (double& pass : node_pass_s_)
      pass = std::max(pass, turns * platform_.turn_us * 1e-6);
  }
  ordered_ = platform_.transport == TransportKind::Flow || platform_.noise_scope == NoiseScope::Message ||
             platform_.rate_jitter > 0 || platform_.pacing_gbps > 0 || platform_.eager_threshold_bytes >= 0 ||
             ((platform_.limiter_gbps > 0 || platform_.backbone_gbps > 0) && platform_.bucket_gbps > 0);
  ranks_.resize(workload.ranks);
  relays_.assign(workload.ranks, 0);
  if (platform_.reception == Reception::RoundRobin && overlay_)
    for (int r = 0; r < workload.ranks; r++)
      ranks_[r].connections = connection_list(*overlay_, r);
}

Sim::~Sim()
{
  for (auto& r : ranks_)
    if (r.loop)
      r.loop.destroy();
}

void Sim::run(Workload& workload, Transport& transport)
{
  workload_ = &workload;
  transport_ = &transport;
  for (size_t r = 0; r < ranks_.size(); r++) {
    ranks_[r].loop = rank_main(static_cast<int>(r)).handle;
    schedule(0, Event::Resume, static_cast<uint32_t>(r), ranks_[r].generation);
  }
  transport.run(*this);
  if (progress_ != nullptr)
    progress_->store(static_cast<int64_t>(kProgressScale), std::memory_order_relaxed);
}

double Sim::now() const { return now_; }

void Sim::schedule(double date, Event::Kind kind, uint32_t arg, uint32_t generation)
{
  events_.push_back(Event{date, event_seq_++, arg, generation, kind});
  std::push_heap(events_.begin(), events_.end(), std::greater<>());
  transport_->notify();
}

double Sim::run_due(double until)
{
  while (not done_ && not events_.empty() && events_.front().date <= until) {
    std::pop_heap(events_.begin(), events_.end(), std::greater<>());
    Event e = events_.back();
    events_.pop_back();
    if (until == kInf)
      now_ = e.date;  // the event loop's own clock (the queue transport)
    dispatch(e);
    // A virtual call and a store per 256 events: nothing next to the events themselves.
    if (progress_ != nullptr && (++dispatched_ & 255) == 0)
      progress_->store(static_cast<int64_t>(workload_->progress() * kProgressScale), std::memory_order_relaxed);
  }
  return events_.empty() || done_ ? kInf : events_.front().date;
}

void Sim::dispatch(const Event& e)
{
  switch (e.kind) {
    case Event::Resume: {
      RankState& r = ranks_[e.arg];
      if (e.generation != r.generation || r.loop.done())
        return;
      r.blocked = false;
      r.loop.resume();
      if (r.loop.promise().error)
        std::rethrow_exception(r.loop.promise().error);
      return;
    }
    case Event::Start:
      start_transfer(e.arg);
      return;
    case Event::Transport:
      transport_->step(*this, e.arg);
      return;
    case Event::Serve:
      serve(e.arg, now_);
      return;
  }
}

void Sim::suspend_until(RankState& r, double date, bool wakeable)
{
  r.generation++;
  r.blocked = wakeable;
  if (date != kInf)
    schedule(date, Event::Resume, static_cast<uint32_t>(&r - ranks_.data()), r.generation);
  // A rank whose copies are done has its library catch up when it next waits: after what
  // the rank itself did at this date (a receive it posted, and answered, first; its
  // resume above is scheduled before them). At every suspension, wakeable or not: a rank
  // that polls on a pass grid may never wait wakeable again.
  if (r.copying == 0 && not r.deferred.empty()) {
    std::vector<uint32_t> due;
    due.swap(r.deferred);
    for (uint32_t id : due)
      serve(id, now_);
  }
}

void Sim::wake(int rank)
{
  RankState& r = ranks_[rank];
  if (r.blocked) {
    r.blocked = false;
    r.generation++;
    schedule(now_, Event::Resume, static_cast<uint32_t>(rank), r.generation);
  }
}

void Sim::finish()
{
  done_ = true;
  finish_time_ = now_;
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
  const double pass_s = pass_of(r);
  if (pass_s <= 0) {
    r.t_free = now;
    return;
  }
  double k = std::ceil((now - r.t_free) / pass_s - 1e-9);
  r.t_free += k * pass_s;
  r.rr_pos = static_cast<size_t>((r.rr_pos + static_cast<uint64_t>(k)) % list_size(r));
}

double Sim::grid_at_or_after(const RankState& r, double t) const
{
  if (t <= r.t_free + kTimeEpsilon)
    return r.t_free;
  const double pass_s = pass_of(r);
  if (pass_s <= 0)
    return t;
  return r.t_free + std::ceil((t - r.t_free) / pass_s - 1e-9) * pass_s;
}

// The inbox entry the rank will receive first, and the date of that pass.
int Sim::pick(const RankState& r, double* when) const
{
  *when = kInf;
  int best = -1;
  size_t m = list_size(r);
  const double pass_s = pass_of(r);
  const int awaited = workload_->awaited_source(static_cast<int>(&r - ranks_.data()));
  if (awaited == Workload::kNoSource)
    return best;
  for (size_t i = 0; i < r.inbox.size(); i++) {
    const Message& msg = pool_[r.inbox[i]];
    if (awaited != Workload::kAnySource && msg.from != awaited)
      continue;
    double t;
    if (platform_.reception == Reception::AnySource) {
      t = grid_at_or_after(r, msg.visible_at);
    } else {
      // The pass that probes source position p comes (p - rr_pos) mod m passes from now.
      size_t k = (position(r, msg.from) + m - r.rr_pos) % m;
      t = r.t_free + static_cast<double>(k) * pass_s;
      if (pass_s <= 0) {
        t = std::max(t, msg.visible_at);
      } else if (t + kTimeEpsilon < msg.visible_at) {
        // The pointer comes back to this source every m passes.
        double cycle = static_cast<double>(m) * pass_s;
        t += std::ceil((msg.visible_at - t) / cycle - 1e-9) * cycle;
      }
    }
    if (t < *when) {
      *when = t;
      best = static_cast<int>(i);
      // No pass comes before the next one: the first message it can take is the pick
      // (the same one as scanning on, and a full inbox of a linear Alltoall is not
      // scanned at every pass).
      if (t <= r.t_free)
        break;
    }
  }
  return best;
}

RankLoop Sim::rank_main(int rank)
{
  RankState& r = ranks_[rank];
  const double stretch = node_stretch_[static_cast<size_t>(node_of(rank))];
  const double pass_s = pass_of(r);
  const double recv_o = platform_.recv_overhead_us * 1e-6 * stretch;
  const double send_o = platform_.send_overhead_us * 1e-6 * stretch;
  const double per_byte = platform_.per_byte_overhead_ns * 1e-9 * stretch;
  const double gap = platform_.gap_us * 1e-6;
  std::vector<uint32_t> out;
  while (not done_) {
    double now = now_;
    align(r, now);
    double t_msg;
    int chosen = pick(r, &t_msg);
    double t_own = workload_->wants_pass(rank) ? r.t_free : kInf;
    double t_pass = std::min(t_msg, t_own);
    if (t_pass > now + kTimeEpsilon) {
      // Under round-robin a message arriving meanwhile may be probed sooner, and a
      // message may become visible sooner than the one picked: stay wakeable, unless the
      // pass is the next one on the grid (no pass can come before it).
      bool wakeable = platform_.reception == Reception::RoundRobin || t_pass > r.t_free + kTimeEpsilon;
      suspend_until(r, t_pass, wakeable);
      co_await Park{};
      continue;
    }
    // A pass starts now: probe, receive at most one message, process, own work, send.
    uint32_t got_id = 0;
    bool got = false;
    if (chosen >= 0) {
      const Message& m = pool_[r.inbox[chosen]];
      // Under round-robin the chosen message is probed in this pass only if it sits at
      // the pointer.
      bool found = platform_.reception != Reception::RoundRobin || position(r, m.from) == r.rr_pos;
      found = found && m.visible_at <= now + kTimeEpsilon;
      // Sends to post first: the blocking receive waits for the next pass.
      if (not m.complete && t_own <= now + kTimeEpsilon && workload_->posts_before_receiving())
        found = false;
      if (found) {
        got_id = r.inbox[chosen];
        r.inbox.erase(r.inbox.begin() + chosen);
        got = true;
      }
    }
    if (platform_.reception == Reception::RoundRobin)
      r.rr_pos = (r.rr_pos + 1) % list_size(r);
    if (got) {
      // A message seen before it has fully arrived is taken by a blocking receive; a
      // rendezvous request is answered (clear to send) first.
      Message& m = pool_[got_id];
      if (m.phase == kRequestToSend && not m.matched) {
        m.matched = true;
        if (m.rts_arrived)
          stage(got_id, kClearToSend, m.to, m.from, 0, now_);
      }
      r.receiving = true;
      for (;;) {
        if (done_)
          co_return;
        if (not m.complete)
          suspend_until(r, kInf, true);
        else if (m.complete_at > now_ + kTimeEpsilon)
          suspend_until(r, m.complete_at, false);
        else
          break;
        co_await Park{};
      }
      r.receiving = false;
      now = now_;
    }
    double t = now + pass_s;
    r.busy_until = t;
    out.clear();
    // A copy: creating messages in the pass may reuse the pool entry.
    Message received;
    bool for_me = false;
    if (got) {
      Message& m = pool_[got_id];
      t += recv_o + per_byte * static_cast<double>(m.bytes);
      if (m.final_dst != rank) {
        // A relay: forwarded in the same pass.
        relays_[rank]++;
        m.from = rank;
        m.to = next_hop(m.origin, rank, m.final_dst);
        out.push_back(got_id);
      } else {
        delivered_hops_ += m.hops;
        delivered_messages_++;
        received = m;
        for_me = true;
        pool_.release(got_id);
      }
    }
    workload_->pass(*this, rank, for_me ? &received : nullptr, t, out);
    t += workload_->compute_seconds(rank) * stretch;
    r.busy_until = t;
    for (uint32_t id : out) {
      t += send_o + per_byte * static_cast<double>(pool_[id].bytes);
      t = std::max(t, r.last_injection + gap);
      r.busy_until = t;
      if (t > now_ + kTimeEpsilon) {
        suspend_until(r, t, false);
        co_await Park{};
      }
      r.last_injection = t;
      inject(id);
    }
    r.t_free = t;
    workload_->pass_done(*this, rank, t);
  }
}

// ---- Transfers --------------------------------------------------------------------
// A transfer leaves when the sender's NIC stage lets it go, reaches the rank when the
// receiver's NIC stage hands it over, and is visible to a probe from a date that
// depends on the probe mode.

void Sim::inject(uint32_t id)
{
  Message& m = pool_[id];
  m.hops++;
  transfers_++;
  double now = now_;
  m.complete = false;
  m.announced = false;
  m.matched = false;
  m.rts_arrived = false;
  bool rendezvous = is_rendezvous(m);
  double release = rendezvous ? stage(id, kRequestToSend, m.from, m.to, 0, now)
                              : stage(id, kData, m.from, m.to, m.bytes, now);
  if (platform_.probe == Probe::Post) {
    announce(id, now);
  } else if (platform_.probe == Probe::Header && not rendezvous) {
    // The header is the first byte: it arrives one route latency after the transfer starts.
    announce(id, release + transport_->route_latency(*this, m.from, m.to));
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

bool Sim::is_rendezvous(const Message& m) const
{
  return platform_.eager_threshold_bytes >= 0 && m.bytes > platform_.eager_threshold_bytes;
}

int64_t Sim::wire_bytes(const Message& m) const
{
  // Open MPI's ob1 sends a rendezvous's first fragment (btl rndv_eager_limit, the eager
  // limit by default) with the request; the rest follows the receiver's answer.
  if (m.phase == kClearToSend)
    return 0;
  if (not is_rendezvous(m))
    return m.phase == kData ? m.bytes : 0;
  int64_t first = std::min(m.bytes, platform_.rendezvous_first_bytes);
  return m.phase == kRequestToSend ? first : m.bytes - first;
}

bool Sim::through_limiter(const Message& m) const
{
  return platform_.limiter_scope == LimiterScope::All || rendezvous_bytes(m);
}

bool Sim::through_backbone(const Message& m) const
{
  return platform_.backbone_scope == LimiterScope::All || rendezvous_bytes(m);
}

bool Sim::through_bulk_host(const Message& m) const
{
  return has_bulk_hosts(platform_) && rendezvous_bytes(m);
}

bool Sim::rendezvous_bytes(const Message& m) const { return is_rendezvous(m) && m.phase != kClearToSend; }

double Sim::stage(uint32_t id, int phase, int src, int dst, int64_t /*bytes*/, double t)
{
  Message& m = pool_[id];
  m.phase = phase;
  if (ordered_)
    m.order = connections_[connection_key(src, dst)].staged++;
  m.staged_at = t;
  m.spread = 0;
  m.rate = 0;
  double release = t;
  if (nic_.active() && node_of(src) != node_of(dst)) {
    if (phase != kData && wire_bytes(m) == 0)
      release = nic_.control_egress(node_of(src), t, connection_key(src, dst), now_);
    else
      release = nic_.egress(node_of(src), t, wire_bytes(m), &m.spread, &m.rate, connection_key(src, dst), now_);
    release = through_bucket_and_limiter(m, release);
  }
  if (release <= now_ && transport_->can_start_now())
    start_transfer(id);
  else
    schedule(release, Event::Start, id);
  return release;
}

// The NIC stage starts a transfer its bucket held back so that, moving at the line's
// rate, its last byte leaves when the bucket lets it go. A limiter or a backbone slower
// than the line would then serve the bytes after the bucket instead of as it lets them
// out, and add s/D to the bucket's time: a transfer that crosses one starts with its
// first byte instead, at the bucket's pace (docs/model.md, "Per-node limiter").
double Sim::through_bucket_and_limiter(Message& m, double release)
{
  bool limited = platform_.limiter_gbps > 0 && through_limiter(m);
  bool shared = platform_.backbone_gbps > 0 && through_backbone(m);
  if (m.rate > 0 || not(limited || shared))
    return release;
  auto s = static_cast<double>(wire_bytes(m));
  double at_line = s / (platform_.bandwidth_gbps * 1e9 / 8.0);
  if (s <= 0 || m.spread <= at_line * (1 + 1e-12))
    return release;
  m.rate = s / m.spread;
  return release - (m.spread - at_line);
}

bool Sim::copied_by_receiver(const Message& m) const
{
  return m.phase == kData && is_rendezvous(m) && node_of(m.from) == node_of(m.to);
}

void Sim::start_transfer(uint32_t id)
{
  Message& m = pool_[id];
  m.started_at = now_;
  if (copied_by_receiver(m))
    ranks_[m.to].copying++;
  if (m.phase == kClearToSend)
    transport_->start(*this, id, m.to, m.from, 0);
  else
    transport_->start(*this, id, m.from, m.to, wire_bytes(m));
}

void Sim::transfer_done(uint32_t id)
{
  Message& m = pool_[id];
  m.arrived_at = now_;
  if (not ordered_) {
    deliver(id);
    return;
  }
  uint64_t key = connection_key(m.phase == kClearToSend ? m.to : m.from, m.phase == kClearToSend ? m.from : m.to);
  auto it = connections_.find(key);
  if (m.order != it->second.delivered) {
    it->second.held.emplace(m.order, id);
    return;
  }
  for (;;) {
    it->second.delivered++;
    deliver(id);
    // Delivering may stage transfers (on any connection): look the connection up again.
    it = connections_.find(key);
    Connection& c = it->second;
    if (c.held.empty() || c.held.begin()->first != c.delivered) {
      if (c.held.empty() && c.delivered == c.staged)
        connections_.erase(it);
      return;
    }
    id = c.held.begin()->second;
    c.held.erase(c.held.begin());
  }
}

// A rank's library answers a request its receive matched, or moves the data its answer
// cleared, when the rank is in MPI (waiting), not in the middle of a pass: MPI progresses
// only inside its calls. What arrives during a pass is served when the pass is over,
// after the rank's own next step at that date (the rank's resume was scheduled first).
// Nor while the rank copies an on-node rendezvous message in: Open MPI's shared-memory
// transport moves it by one synchronous copy of the receiver's (vader's single-copy get,
// CMA), inside its progress call, so what comes meanwhile is handled at the rank's next
// wait, after the receive it posts on returning (docs/model.md, "Protocol").
void Sim::serve(uint32_t id, double at)
{
  Message& m = pool_[id];
  RankState& lib = ranks_[m.phase == kRequestToSend ? m.to : m.from];
  if (lib.copying > 0) {
    lib.deferred.push_back(id);
    return;
  }
  if (lib.busy_until > std::max(at, now_) + kTimeEpsilon) {
    schedule(lib.busy_until, Event::Serve, id);
    return;
  }
  if (m.phase == kRequestToSend)
    stage(id, kClearToSend, m.to, m.from, 0, at);
  else
    stage(id, kData, m.from, m.to, m.bytes, at);
}

bool Sim::receive_posted(uint32_t id) const
{
  const Message& m = pool_[id];
  const RankState& r = ranks_[m.to];
  if (r.receiving)
    return false;
  int source = workload_->posted_receive(m.to);
  if (source == Workload::kNoSource || (source != Workload::kAnySource && source != m.from))
    return false;
  // An earlier message the receive would take first is there already.
  for (uint32_t other : r.inbox)
    if (other != id && (source == Workload::kAnySource || pool_[other].from == source))
      return false;
  return true;
}

void Sim::deliver(uint32_t id)
{
  Message& m = pool_[id];
  int src = m.phase == kClearToSend ? m.to : m.from;
  int dst = m.phase == kClearToSend ? m.from : m.to;
  double at = now_;
  if (nic_.active() && node_of(src) != node_of(dst)) {
    if (m.phase != kData && wire_bytes(m) == 0)
      at = nic_.control_ingress(node_of(dst), at, connection_key(src, dst), now_);
    else
      at = nic_.ingress(node_of(dst), at, wire_bytes(m), m.spread, connection_key(src, dst), now_);
  }
  if (tracing_)
    trace_.push_back({m.staged_at, m.started_at, m.arrived_at, at, m.phase, src, dst, wire_bytes(m), m.seq});
  switch (m.phase) {
    case kRequestToSend:
      m.rts_arrived = true;
      if (not m.matched && (workload_->posts_receives_early(m.to) || receive_posted(id))) {
        m.matched = true;
        if (not m.announced)
          announce(id, at);  // its pass takes it, and waits for the data
      }
      if (m.matched)
        serve(id, at);
      else if (not m.announced)
        announce(id, at);
      break;
    case kClearToSend:
      // The sender's library moves the data as soon as the receiver cleared it.
      serve(id, at);
      break;
    default:
      if (copied_by_receiver(m))
        ranks_[m.to].copying--;
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

}  // namespace hopsim
