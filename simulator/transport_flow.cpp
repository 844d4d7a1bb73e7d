// The flow transport: SimGrid's network model moves the bytes. One driver actor runs the
// event loop between SimGrid's network events: it sleeps until the next event is due or a
// transfer ends (a kernel callback wakes it), then runs what is due. Transfers are mailbox
// transfers between per-node port actors: SimGrid 3.32 keeps host-to-host transfers
// (which it marks detached) in one global list and removes each finished one by linear
// search, O(transfers in flight) per message; a port's own list stays short.
// With limiter_scope or backbone_scope rendezvous each node has a second port, on its
// second host, for the rendezvous transfers (platform_builder.hpp: bulk_host_name).
#include "platform_builder.hpp"
#include "rank_loop.hpp"
#include "transport.hpp"

#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include <limits>
#include <unordered_map>

namespace sg4 = simgrid::s4u;
using simgrid::kernel::resource::Action;

namespace hopsim {

namespace {

constexpr double kTimeEpsilon = 1e-12;

class FlowTransport;
FlowTransport* current = nullptr;

class FlowTransport : public Transport {
public:
  explicit FlowTransport(const std::vector<sg4::Host*>& node_hosts) : hosts_(node_hosts), nodes_(node_hosts.size())
  {
    for (size_t i = 0; i < nodes_; i++)
      if (auto* bulk = sg4::Host::by_name_or_null(bulk_host_name(node_hosts[i]->get_name())))
        hosts_.push_back(bulk);
    bulk_ = hosts_.size() > nodes_;
  }

  void run(Sim& sim) override
  {
    sim_ = &sim;
    current = this;
    // A transfer "arrives" when SimGrid's network action ends: the callback hands it to
    // the simulation in the kernel and wakes the driver.
    static bool connected = false;
    if (not connected) {
      connected = true;
      sg4::Link::on_communication_state_change_cb([](simgrid::kernel::resource::NetworkAction& action,
                                                     Action::State /*previous*/) {
        // NetworkAction's definition is not installed; it derives from Action alone.
        const auto& a = reinterpret_cast<const Action&>(action);
        if (current != nullptr && a.get_state() == Action::State::FINISHED)
          current->on_done(a.get_activity());
      });
    }
    wake_ = sg4::Semaphore::create(0);
    ports_.resize(hosts_.size());
    for (size_t i = 0; i < hosts_.size(); i++) {
      ports_[i].mailbox = sg4::Mailbox::by_name("node-" + std::to_string(i));
      ports_[i].wake = sg4::Semaphore::create(0);
      sg4::Actor::create("port-" + std::to_string(i), hosts_[i], [this, i] { port_main(i); });
    }
    sg4::Actor::create("driver", hosts_[0], [this] { drive(); });
    sg4::Engine::get_instance()->run();
    current = nullptr;
  }

  void start(Sim& sim, uint32_t id, int src, int dst, int64_t bytes) override
  {
    // The source node's port posts it (a mailbox transfer starts from its sender's host).
    int a = sim.node_of(src), b = sim.node_of(dst);
    const Message& m = sim.message(id);
    if (bulk_ && a != b && sim.through_bulk_host(m)) {
      a += static_cast<int>(nodes_);
      b += static_cast<int>(nodes_);
    }
    Port& p = ports_[a];
    p.outbox.push_back(Send{id, b, bytes, m.rate});
    wake_port(p);
  }

  double route_latency(const Sim& sim, int src, int dst) override
  {
    std::vector<sg4::Link*> links;
    double latency = 0;
    hosts_[sim.node_of(src)]->route_to(hosts_[sim.node_of(dst)], links, &latency);
    return latency;
  }

  void notify() override
  {
    if (blocked_) {
      blocked_ = false;
      wake_->release();
    }
  }

  bool can_start_now() const override { return not in_kernel_; }

private:
  struct InFlight {
    uint32_t id;
    int src_node, dst_node;
    sg4::CommPtr comm;
  };
  struct Send {
    uint32_t id;
    int dst_node;
    int64_t bytes;
    double rate;  // bytes/s at most (a paced connection); 0: the links'
  };
  // A node's port: it sends the node's transfers and is the permanent receiver of its
  // mailbox (a transfer then starts when it is posted, as an eager send does).
  struct Port {
    sg4::Mailbox* mailbox = nullptr;
    sg4::SemaphorePtr wake;
    bool blocked = false;
    std::vector<Send> outbox;
    std::vector<sg4::CommPtr> sent_done;  // finished sends, to complete
    int arrivals = 0;                     // finished transfers into the mailbox, to take
    std::vector<sg4::CommPtr> taken;      // taken from the mailbox, to complete
  };

  static void wake_port(Port& p)
  {
    if (p.blocked) {
      p.blocked = false;
      p.wake->release();
    }
  }

  void port_main(size_t node)
  {
    Port& p = ports_[node];
    p.mailbox->set_receiver(sg4::Actor::self());
    sg4::Actor::self()->daemonize();  // ends with the driver
    static char payload;
    static void* sink;
    std::vector<Send> sends;
    for (;;) {
      if (p.outbox.empty() && p.sent_done.empty() && p.arrivals == 0) {
        p.blocked = true;
        p.wake->acquire();
        p.blocked = false;
        continue;
      }
      sends.swap(p.outbox);
      for (const Send& s : sends) {
        sg4::CommPtr c = ports_[s.dst_node].mailbox->put_init(&payload, static_cast<uint64_t>(s.bytes));
        if (s.rate > 0)
          c->set_rate(s.rate);
        c->start();
        in_flight_.emplace(c->get_impl(), InFlight{s.id, static_cast<int>(node), s.dst_node, c});
      }
      sends.clear();
      // Waiting on a finished transfer returns at once and drops it from this actor's
      // activities; the receiving side takes one transfer (the oldest posted) per arrival
      // and completes it once it is no longer in flight.
      std::vector<sg4::CommPtr> done;
      done.swap(p.sent_done);
      for (auto& c : done)
        c->wait();
      for (; p.arrivals > 0; p.arrivals--)
        p.taken.push_back(p.mailbox->get_async(&sink));
      size_t kept = 0;
      for (auto& c : p.taken) {
        if (in_flight_.count(c->get_impl()) != 0)
          p.taken[kept++] = c;
        else
          c->wait();
      }
      p.taken.resize(kept);
    }
  }

  void on_done(const void* activity)
  {
    auto it = in_flight_.find(activity);
    if (it == in_flight_.end())
      return;
    uint32_t id = it->second.id;
    Port& src = ports_[it->second.src_node];
    Port& dst = ports_[it->second.dst_node];
    src.sent_done.push_back(std::move(it->second.comm));
    dst.arrivals++;
    in_flight_.erase(it);
    wake_port(src);
    wake_port(dst);
    in_kernel_ = true;
    sim_->set_now(sg4::Engine::get_clock());
    sim_->transfer_done(id);
    in_kernel_ = false;
    notify();
  }

  void drive()
  {
    while (not sim_->done()) {
      double clock = sg4::Engine::get_clock();
      sim_->set_now(clock);
      double next = sim_->run_due(clock + kTimeEpsilon);
      if (sim_->done())
        break;
      blocked_ = true;
      if (next == std::numeric_limits<double>::infinity())
        wake_->acquire();
      else
        wake_->acquire_timeout(next - clock);
      blocked_ = false;
    }
  }

  std::vector<sg4::Host*> hosts_;  // the nodes' hosts, then their second hosts if any
  size_t nodes_;
  bool bulk_ = false;
  Sim* sim_ = nullptr;
  sg4::SemaphorePtr wake_;
  bool blocked_ = false;
  bool in_kernel_ = false;
  std::unordered_map<const void*, InFlight> in_flight_;
  std::vector<Port> ports_;
};

}  // namespace

std::unique_ptr<Transport> make_flow_transport(const std::vector<sg4::Host*>& node_hosts)
{
  return std::make_unique<FlowTransport>(node_hosts);
}

}  // namespace hopsim
