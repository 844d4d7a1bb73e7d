// What moves a message's bytes from one node to another, behind the rank loops. Two
// transports (docs/model.md, "Transports"):
// - flow: SimGrid's network model (CM02, max-min fair sharing of every link), the
//   reference; one driver actor runs the rank loops and starts host-to-host transfers.
// - queue: per-link FIFO queues with cut-through serialisation on the star, computed as
//   date arithmetic in the event loop; no SimGrid at all. Same closed forms as flow when
//   nothing contends; FIFO instead of fair sharing when something does.
#pragma once

#include "spec.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace simgrid::s4u {
class Host;
}

namespace hopsim {

class Sim;

class Transport {
public:
  virtual ~Transport() = default;
  // Runs the simulation's event loop until it finishes.
  virtual void run(Sim& sim) = 0;
  // Starts moving message `id` (`bytes`, rank `src` to rank `dst`) at sim.now(); calls
  // sim.transfer_done(id) at the date its last byte is delivered.
  virtual void start(Sim& sim, uint32_t id, int src, int dst, int64_t bytes) = 0;
  // An Event::Transport of this transport came due.
  virtual void step(Sim&, uint32_t) {}
  // The latency of the route from rank src to rank dst: when a header arrives.
  virtual double route_latency(const Sim& sim, int src, int dst) = 0;
  // An event was scheduled (possibly from outside the event loop).
  virtual void notify() {}
  // False while the transport is in a context where it cannot start a transfer at once
  // (SimGrid's kernel callbacks): the start then goes through the event loop.
  virtual bool can_start_now() const { return true; }
};

// SimGrid's flow model on `node_hosts` (the platform is built before): node i of the
// placement (Sim::node_of) is node_hosts[i].
std::unique_ptr<Transport> make_flow_transport(const std::vector<simgrid::s4u::Host*>& node_hosts);
// FIFO queues on the star of `platform`, `nodes` of them used.
std::unique_ptr<Transport> make_queue_transport(const PlatformSpec& platform, int nodes);

}  // namespace hopsim
