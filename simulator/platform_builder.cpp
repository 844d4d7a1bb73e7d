#include "platform_builder.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <sstream>
#include <stdexcept>
#include <string>

namespace sg4 = simgrid::s4u;

namespace hopsim {

namespace {

double bytes_per_second(double gbps) { return gbps * 1e9 / 8.0; }
double seconds(double us) { return us * 1e-6; }
// Nodes compute nothing: rank costs are modelled as time, so the speed is arbitrary.
constexpr double kHostSpeed = 1e9;

std::vector<unsigned> parse_list(const std::string& text, char sep)
{
  std::vector<unsigned> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, sep))
    out.push_back(static_cast<unsigned>(std::stoul(item)));
  return out;
}

std::vector<std::string> split(const std::string& text, char sep)
{
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, sep))
    out.push_back(item);
  return out;
}

std::string node_name(unsigned long id) { return "node-" + std::to_string(id); }

std::vector<sg4::Host*> build_star(const PlatformSpec& spec)
{
  auto* zone = sg4::create_star_zone("cluster");
  sg4::Link* backbone = nullptr;
  if (spec.backbone_gbps > 0)
    backbone = zone->create_link("backbone", bytes_per_second(spec.backbone_gbps))->seal();
  std::vector<sg4::Host*> hosts;
  hosts.reserve(spec.nodes);
  for (int i = 0; i < spec.nodes; i++) {
    auto* host = zone->create_host(node_name(i), kHostSpeed)->seal();
    // Half the one-way latency on each NIC: a route crosses two of them.
    auto* nic = zone->create_split_duplex_link(node_name(i) + "-nic", bytes_per_second(spec.bandwidth_gbps))
                    ->set_latency(seconds(spec.latency_us) / 2)
                    ->seal();
    auto* loop = zone->create_link(node_name(i) + "-intra", bytes_per_second(spec.intra_bandwidth_gbps))
                     ->set_latency(seconds(spec.intra_latency_us))
                     ->seal();
    std::vector<sg4::LinkInRoute> up{{nic, sg4::LinkInRoute::Direction::UP}};
    std::vector<sg4::LinkInRoute> down{{nic, sg4::LinkInRoute::Direction::DOWN}};
    std::vector<sg4::LinkInRoute> bulk_up = up, bulk_down = down;
    if (spec.limiter_gbps > 0) {
      // One shared link in both directions of the node's routes: its sent and received
      // bytes share one capacity (SimGrid's limiter_link), no latency of its own.
      auto* limiter = zone->create_link(node_name(i) + "-limiter", bytes_per_second(spec.limiter_gbps))->seal();
      bulk_up.emplace_back(limiter);
      bulk_down.emplace_back(limiter);
      if (spec.limiter_scope == LimiterScope::All) {
        up.emplace_back(limiter);
        down.emplace_back(limiter);
      }
    }
    if (backbone) {
      bulk_up.emplace_back(backbone);
      if (spec.backbone_scope == LimiterScope::All)
        up.emplace_back(backbone);
    }
    if (has_bulk_hosts(spec)) {
      // A route is per host pair: the transfers that cross what serves rendezvous
      // messages only leave from and arrive at the node's second host, whose routes hold it.
      auto* bulk = zone->create_host(bulk_host_name(node_name(i)), kHostSpeed)->seal();
      zone->add_route(bulk->get_netpoint(), nullptr, nullptr, nullptr, bulk_up, false);
      zone->add_route(nullptr, bulk->get_netpoint(), nullptr, nullptr, bulk_down, false);
    }
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, up, false);
    zone->add_route(nullptr, host->get_netpoint(), nullptr, nullptr, down, false);
    zone->add_route(host->get_netpoint(), host->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(loop)}, false);
    hosts.push_back(host);
  }
  zone->seal();
  return hosts;
}

// Fat-tree, torus and dragonfly: SimGrid's cluster zones; every link of the zone gets
// bandwidth_gbps and latency_us, and each node a loopback link for its intra-node path.
std::vector<sg4::Host*> build_cluster_zone(const PlatformSpec& spec)
{
  std::vector<sg4::Host*> hosts(spec.nodes, nullptr);
  auto make_host = [&hosts](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long id) {
    if (id >= hosts.size())
      throw std::invalid_argument("the topology has more nodes than [nodes] count");
    auto* host = zone->create_host(node_name(id), kHostSpeed)->seal();
    hosts[id] = host;
    return std::make_pair(host->get_netpoint(), static_cast<simgrid::kernel::routing::NetPoint*>(nullptr));
  };
  auto make_loopback = [&spec](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long id) {
    return zone->create_link(node_name(id) + "-intra", bytes_per_second(spec.intra_bandwidth_gbps))
        ->set_latency(seconds(spec.intra_latency_us))
        ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
        ->seal();
  };
  sg4::ClusterCallbacks callbacks(make_host, make_loopback, {});
  double bw = bytes_per_second(spec.bandwidth_gbps);
  double lat = seconds(spec.latency_us);
  auto policy = sg4::Link::SharingPolicy::SPLITDUPLEX;
  const std::string& p = spec.topology_parameters;
  sg4::NetZone* zone = nullptr;
  if (spec.topology == "torus") {
    std::vector<unsigned long> dims;
    for (unsigned d : parse_list(p, ','))
      dims.push_back(d);
    zone = sg4::create_torus_zone("cluster", nullptr, dims, callbacks, bw, lat, policy);
  } else if (spec.topology == "fat-tree") {
    auto parts = split(p, ';');
    if (parts.size() != 4)
      throw std::invalid_argument("fat-tree topology_parameters must be 'levels;down;up;count'");
    sg4::FatTreeParams params(std::stoul(parts[0]), parse_list(parts[1], ','), parse_list(parts[2], ','),
                              parse_list(parts[3], ','));
    zone = sg4::create_fatTree_zone("cluster", nullptr, params, callbacks, bw, lat, policy);
  } else if (spec.topology == "dragonfly") {
    auto parts = split(p, ';');
    if (parts.size() != 4)
      throw std::invalid_argument("dragonfly topology_parameters must be 'groups,links;chassis,links;routers,links;nodes'");
    auto g = parse_list(parts[0], ',');
    auto c = parse_list(parts[1], ',');
    auto r = parse_list(parts[2], ',');
    if (g.size() != 2 || c.size() != 2 || r.size() != 2)
      throw std::invalid_argument("dragonfly topology_parameters must be 'groups,links;chassis,links;routers,links;nodes'");
    sg4::DragonflyParams params({g[0], g[1]}, {c[0], c[1]}, {r[0], r[1]}, std::stoul(parts[3]));
    zone = sg4::create_dragonfly_zone("cluster", nullptr, params, callbacks, bw, lat, policy);
  } else {
    throw std::invalid_argument("unknown topology '" + spec.topology + "'");
  }
  zone->seal();
  for (auto* h : hosts)
    if (h == nullptr)
      throw std::invalid_argument("the topology has fewer nodes than [nodes] count");
  return hosts;
}

}  // namespace

std::string bulk_host_name(const std::string& node) { return node + "-bulk"; }

void configure_network_model(int actors)
{
  auto* e = sg4::Engine::get_instance();
  // CM02 applies no latency or bandwidth factors, so that one message of s bytes takes
  // exactly latency + s / bandwidth; LV08 (SimGrid's default) would not.
  e->set_config("network/model:CM02");
  // No reverse ACK flow (it adds 5% of the bytes in the other direction).
  e->set_config("network/crosstraffic:0");
  // Lift the TCP window bound gamma / (2 * latency) so that bandwidth is the link's.
  e->set_config("network/TCP-gamma:1e30");
  e->set_config("contexts/factory:raw");
  // Stacks are allocated (and touched) per actor: 32 KiB is ample for the rank loop and
  // took a 32768-rank run from 1.9 to 1.3 GiB. Small runs keep guard pages, so an
  // overflow in the loop's code paths shows there as a crash, not as corruption.
  e->set_config("contexts/stack-size:32");
  // Past ~30000 actors the guard pages exhaust the kernel's map-count limit.
  if (actors > 30000)
    e->set_config("contexts/guard-size:0");
}

std::vector<sg4::Host*> build_platform(const PlatformSpec& spec)
{
  if (spec.topology == "star" || spec.topology.empty())
    return build_star(spec);
  return build_cluster_zone(spec);
}

}  // namespace hopsim
