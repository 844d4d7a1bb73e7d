// The queue transport on the star (docs/model.md, "Transports"): every link is a FIFO
// queue that serialises the bytes of one transfer at a time, and a transfer cuts through
// (its first byte enters the next link one latency after it entered this one, its last
// byte leaves no sooner than it left this one). All of it is date arithmetic on the
// event loop: a transfer costs two or three events and no solver.
//
// A route between nodes: the sender's NIC (up), the backbone if there is one, the
// receiver's NIC (down); half the latency before the backbone and half after it, all of
// it before the receiver's NIC without one. Inside a node: the node's intra-node link.
// A link takes transfers in the order their first byte reaches it.
//
// A node's limiter (limiter_gbps: one capacity for the bytes it sends and receives) is
// not a link a transfer holds: it serves the bytes of every transfer through the node,
// sent or received, in the order their first byte reaches it (when the transfer starts
// on the sender's NIC, when it starts on the receiver's), at its rate, and a transfer's
// last byte passes no sooner than the limiter has served it. Each crossing is an event
// at that date, so the order is the order of arrival. With limiter_scope rendezvous only
// a rendezvous's transfers cross it (Sim::through_limiter); with backbone_scope
// rendezvous, only theirs cross the backbone (Sim::through_backbone), the others go
// from NIC to NIC with all of the latency before the receiver's.
#include "rank_loop.hpp"
#include "transport.hpp"

#include <algorithm>
#include <limits>

namespace hopsim {

namespace {

double bytes_per_second(double gbps) { return gbps * 1e9 / 8.0; }

// Where a transfer is: entering the backbone, entering the receiver's NIC, delivered,
// entering the sender's limiter, entering the receiver's limiter.
enum Step { kBackbone = 1, kDown = 2, kDelivered = 3, kLimitUp = 4, kLimitDown = 5 };

class QueueTransport : public Transport {
public:
  QueueTransport(const PlatformSpec& p, int nodes)
      : nic_(bytes_per_second(p.bandwidth_gbps)), intra_(bytes_per_second(p.intra_bandwidth_gbps)),
        backbone_(p.backbone_gbps > 0 ? bytes_per_second(p.backbone_gbps) : 0),
        limiter_(p.limiter_gbps > 0 ? bytes_per_second(p.limiter_gbps) : 0), latency_(p.latency_us * 1e-6),
        intra_latency_(p.intra_latency_us * 1e-6), up_(nodes, 0), down_(nodes, 0), loop_(nodes, 0),
        limit_(nodes, 0)
  {
  }

  void run(Sim& sim) override { sim.run_due(std::numeric_limits<double>::infinity()); }

  void start(Sim& sim, uint32_t id, int src, int dst, int64_t bytes) override
  {
    Message& m = sim.message(id);
    double now = sim.now();
    auto s = static_cast<double>(bytes);
    int a = sim.node_of(src), b = sim.node_of(dst);
    m.wire_src = a;
    m.wire_dst = b;
    if (a == b) {
      double start = std::max(now, loop_[a]);
      loop_[a] = start + s / intra_;
      m.link = kDelivered;
      sim.schedule(start + intra_latency_ + s / intra_, Event::Transport, id);
      return;
    }
    bool paced = m.rate > 0;
    double start;
    m.wire_end = cross(up_[a], now, s, nic_, paced ? now + s / m.rate : 0, paced, &start);
    m.wire_start = start;
    if (limited(sim, m)) {
      m.link = kLimitUp;
      sim.schedule(start, Event::Transport, id);
      return;
    }
    m.link = via_backbone(sim, m) ? kBackbone : kDown;
    sim.schedule(start + first_latency(sim, m), Event::Transport, id);
  }

  void step(Sim& sim, uint32_t id) override
  {
    Message& m = sim.message(id);
    if (m.link == kDelivered) {
      sim.transfer_done(id);
      return;
    }
    double now = sim.now();
    auto s = static_cast<double>(sim.wire_bytes(m));
    bool paced = m.rate > 0;
    if (m.link == kLimitUp) {
      m.wire_end = std::max(m.wire_end, limit(m.wire_src, now, s));
      m.link = via_backbone(sim, m) ? kBackbone : kDown;
      sim.schedule(now + first_latency(sim, m), Event::Transport, id);
      return;
    }
    if (m.link == kLimitDown) {
      m.link = kDelivered;
      sim.schedule(std::max(m.wire_end, limit(m.wire_dst, now, s)), Event::Transport, id);
      return;
    }
    if (m.link == kBackbone) {
      double start;
      m.wire_end = cross(backbone_free_, now, s, backbone_, m.wire_end + latency_ / 2, paced, &start);
      m.wire_start = start;
      m.link = kDown;
      sim.schedule(start + latency_ / 2, Event::Transport, id);
      return;
    }
    double after = first_latency(sim, m);
    double start;
    double last = cross(down_[m.wire_dst], now, s, nic_, m.wire_end + after, paced, &start);
    if (limited(sim, m)) {
      m.wire_end = last;
      m.link = kLimitDown;
      sim.schedule(start, Event::Transport, id);
      return;
    }
    m.link = kDelivered;
    sim.schedule(last, Event::Transport, id);
  }

  double route_latency(const Sim& sim, int src, int dst) override
  {
    return sim.node_of(src) == sim.node_of(dst) ? intra_latency_ : latency_;
  }

private:
  // A transfer whose first byte reaches a link (next free at `free`) at `now` and whose
  // last byte cannot leave before `last_in`: the date its last byte leaves; *start, when
  // its first byte does. Unpaced, it takes the link in FIFO order and holds it until its
  // last byte is out. Paced, its packets go between other transfers' packets: it starts
  // at once, holds the link for its own bytes only, and ends when its rate lets it.
  static double cross(double& free, double now, double s, double link_rate, double last_in, bool paced,
                      double* start)
  {
    double queued = std::max(now, free);
    *start = paced ? now : queued;
    double last = std::max(*start + s / link_rate, last_in);
    free = paced ? queued + s / link_rate : last;
    return last;
  }

  // The node's limiter serves s bytes whose first byte reaches it at now: the date it
  // has served them (it serves one transfer's bytes after another's, never idle while
  // some wait, and is not held while a slower link feeds it).
  double limit(int node, double now, double s)
  {
    limit_[node] = std::max(now, limit_[node]) + s / limiter_;
    return limit_[node];
  }

  bool limited(const Sim& sim, const Message& m) const { return limiter_ > 0 && sim.through_limiter(m); }

  bool via_backbone(const Sim& sim, const Message& m) const { return backbone_ > 0 && sim.through_backbone(m); }

  // Half the latency before the backbone and half after it; all of it before the
  // receiver's NIC for a transfer that does not cross one.
  double first_latency(const Sim& sim, const Message& m) const
  {
    return via_backbone(sim, m) ? latency_ / 2 : latency_;
  }

  double nic_, intra_, backbone_, limiter_;  // bytes per second
  double latency_, intra_latency_;  // seconds
  // Per link: the date its last queued byte leaves.
  std::vector<double> up_, down_, loop_;
  std::vector<double> limit_;  // per node: the date its limiter has served what it was given
  double backbone_free_ = 0;
};

}  // namespace

std::unique_ptr<Transport> make_queue_transport(const PlatformSpec& platform, int nodes)
{
  return std::make_unique<QueueTransport>(platform, nodes);
}

}  // namespace hopsim
