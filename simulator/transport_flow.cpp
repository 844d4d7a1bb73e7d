// The flow transport: SimGrid's network model moves the bytes. One driver actor runs the
// event loop between SimGrid's network events: it sleeps until the next event is due or a
// transfer ends (a kernel callback wakes it), then runs what is due.
#include "rank_loop.hpp"
#include "transport.hpp"

#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
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
  FlowTransport(const std::vector<sg4::Host*>& node_hosts, int per_node) : hosts_(node_hosts), per_node_(per_node) {}

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
    sg4::Actor::create("driver", hosts_[0], [this] { drive(); });
    sg4::Engine::get_instance()->run();
    current = nullptr;
  }

  void start(Sim& sim, uint32_t id, int src, int dst, int64_t bytes) override
  {
    // Host to host, from the one actor there is. SimGrid 3.32 marks such transfers
    // detached and removes each finished one from a list by linear search (in
    // CommImpl::finish): per message, O(transfers in flight). Mailbox transfers avoid it
    // but need a sending actor on the source host (docs/performance.md).
    sg4::CommPtr c = sg4::Comm::sendto_init(hosts_[src / per_node_], hosts_[dst / per_node_]);
    c->set_payload_size(static_cast<uint64_t>(bytes));
    c->start();
    in_flight_.emplace(c->get_impl(), InFlight{id, c});
    (void)sim;
  }

  double route_latency(const Sim&, int src, int dst) override
  {
    std::vector<sg4::Link*> links;
    double latency = 0;
    hosts_[src / per_node_]->route_to(hosts_[dst / per_node_], links, &latency);
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
    sg4::CommPtr comm;
  };

  void on_done(const void* activity)
  {
    auto it = in_flight_.find(activity);
    if (it == in_flight_.end())
      return;
    uint32_t id = it->second.id;
    finished_.push_back(std::move(it->second.comm));
    in_flight_.erase(it);
    in_kernel_ = true;
    sim_->set_now(sg4::Engine::get_clock());
    sim_->transfer_done(id);
    in_kernel_ = false;
    notify();
  }

  void drive()
  {
    while (not sim_->done()) {
      // Host-to-host transfers belong to no actor's activity list: dropping the last
      // reference frees them (outside the kernel callback that reported them).
      finished_.clear();
      double clock = sg4::Engine::get_clock();
      sim_->set_now(clock);
      double next = sim_->run_due(clock + kTimeEpsilon);
      if (sim_->done())
        break;
      if (not finished_.empty())
        continue;
      blocked_ = true;
      if (next == std::numeric_limits<double>::infinity())
        wake_->acquire();
      else
        wake_->acquire_timeout(next - clock);
      blocked_ = false;
    }
    finished_.clear();
  }

  std::vector<sg4::Host*> hosts_;
  int per_node_;
  Sim* sim_ = nullptr;
  sg4::SemaphorePtr wake_;
  bool blocked_ = false;
  bool in_kernel_ = false;
  std::unordered_map<const void*, InFlight> in_flight_;
  std::vector<sg4::CommPtr> finished_;
};

}  // namespace

std::unique_ptr<Transport> make_flow_transport(const std::vector<sg4::Host*>& node_hosts, int ranks_per_node)
{
  return std::make_unique<FlowTransport>(node_hosts, ranks_per_node);
}

}  // namespace hopsim
