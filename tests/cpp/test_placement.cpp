// Placement (simulator/placement.hpp, docs/model.md "Placement"): the rank -> node maps
// of block, cyclic and explicit placements, their checks, and runs where the placement
// decides which messages cross the network, against closed forms derived by hand.
// Units: us, bytes; 1 Gbit/s = 125 bytes/us.
#include "engine.hpp"
#include "json_fields.hpp"
#include "placement.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

using namespace hopsim;

namespace {

PlatformSpec base(TransportKind transport = TransportKind::Flow)
{
  PlatformSpec p;
  p.nodes = 4;
  p.cores = 4;
  p.latency_us = 10;
  p.bandwidth_gbps = 1;  // 125 bytes/us
  p.intra_latency_us = 0.5;
  p.intra_bandwidth_gbps = 50;  // 6250 bytes/us
  p.transport = transport;
  return p;
}

WorkloadSpec placed(WorkloadKind kind, int ranks, int per_node, Placement placement, std::vector<int> map = {})
{
  WorkloadSpec w;
  w.kind = kind;
  w.ranks = ranks;
  w.ranks_per_node = per_node;
  w.placement = placement;
  w.node_map = std::move(map);
  w.sizes = {0};
  w.repetitions = 1;
  w.iterations = 3;
  return w;
}

}  // namespace

TEST(Placement, BlockFillsEachNodeInTurnCyclicDealsRoundRobin)
{
  // 6 ranks, 2 per node, so 3 nodes: block 0,0,1,1,2,2 (Open MPI's --map-by slot);
  // cyclic r mod 3 = 0,1,2,0,1,2 (--map-by node).
  WorkloadSpec w = placed(WorkloadKind::Exchange, 6, 2, Placement::Block);
  EXPECT_EQ(place_ranks(w), (std::vector<int>{0, 0, 1, 1, 2, 2}));
  w.placement = Placement::Cyclic;
  EXPECT_EQ(place_ranks(w), (std::vector<int>{0, 1, 2, 0, 1, 2}));
  w = placed(WorkloadKind::Exchange, 3, 1, Placement::Map, {2, 0, 2});
  EXPECT_EQ(place_ranks(w), (std::vector<int>{2, 0, 2}));
  EXPECT_EQ(ranks_on_nodes({2, 0, 2}), (std::vector<int>{1, 0, 2}));
}

TEST(Placement, TheEngineRefusesAMapThatDoesNotFit)
{
  PlatformSpec p = base();
  auto refused = [&](std::vector<int> map, const std::string& fragment) {
    WorkloadSpec w = placed(WorkloadKind::Exchange, static_cast<int>(map.size()) + (fragment == "entries"), 1,
                            Placement::Map, map);
    try {
      check_placement(p, w);
      ADD_FAILURE() << "accepted a map needing refusal: " << fragment;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  refused({0, 4}, "rank 1 on node 4; the platform has nodes 0 to 3");
  refused({0, -1}, "rank 1 on node -1");
  refused({1, 1, 1, 1, 1}, "5 ranks on node 1, which has 4 cores");
  refused({0, 1}, "entries");
  p.oversubscribe = true;
  WorkloadSpec w = placed(WorkloadKind::Exchange, 5, 1, Placement::Map, {1, 1, 1, 1, 1});
  EXPECT_NO_THROW(check_placement(p, w));
}

TEST(Placement, APingPongAcrossNodesOrInsideOne)
{
  for (TransportKind t : {TransportKind::Flow, TransportKind::Queue}) {
    // 6250 bytes: inside a node li + s/Bi = 0.5 + 1 = 1.5; across L + s/B = 10 + 50 = 60.
    // Node 3 of 4 (nodes 1 and 2 idle) is as far as node 1 on the star.
    for (auto [map, expected] : {std::pair{std::vector<int>{0, 0}, 1.5}, std::pair{std::vector<int>{0, 3}, 60.0},
                                 std::pair{std::vector<int>{2, 1}, 60.0}}) {
      WorkloadSpec w = placed(WorkloadKind::PingPong, 2, 1, Placement::Map, map);
      w.sizes = {6250};
      std::string r = simulate(base(t), w);
      EXPECT_NEAR(fields(r, "latency_us")[0], expected, 1e-9) << r;
    }
  }
}

// IMB Exchange, 4 ranks, 2 per node, 0-byte messages, each node's NIC queue costing
// c = 5 per message in each direction (intra-node messages bypass it), L = 10: every rank
// sends to r - 1 and r + 1 (mod 4) at t = 0 and ends once both its receives and sends did.
// Block (0,1 | 2,3): two of the eight messages cross each way (0->3, 1->2; 2->1, 3->0).
// A node's two leave its egress queue at c and 2c, arrive L later, and the receiving
// node's ingress queue hands them over at 2c + L and 3c + L: t_max = 3c + L = 25.
// Cyclic (0,2 | 1,3): a rank's neighbours are both on the other node, all eight messages
// cross, four each way: egress c..4c, ingress 2c + L .. 5c + L: t_max = 5c + L = 35.
// The same run costs 2c more per repetition because --map-by node put every neighbour
// on the other host.
TEST(Placement, CyclicSendsEveryExchangeNeighbourAcrossTheNetwork)
{
  for (TransportKind t : {TransportKind::Flow, TransportKind::Queue}) {
    PlatformSpec p = base(t);
    p.nic_message_us = 5;
    std::string block = simulate(p, placed(WorkloadKind::Exchange, 4, 2, Placement::Block));
    std::string cyclic = simulate(p, placed(WorkloadKind::Exchange, 4, 2, Placement::Cyclic));
    EXPECT_NEAR(fields(block, "t_max_us")[0], 3 * 5 + 10, 1e-9) << block;
    EXPECT_NEAR(fields(cyclic, "t_max_us")[0], 5 * 5 + 10, 1e-9) << cyclic;
    // The explicit map of cyclic is cyclic.
    std::string mapped = simulate(p, placed(WorkloadKind::Exchange, 4, 2, Placement::Map, {0, 1, 0, 1}));
    EXPECT_EQ(fields(mapped, "t_max_us"), fields(cyclic, "t_max_us"));
  }
}

// Oversubscription is counted per node of the map: busy-polling ranks beyond a node's
// cores share them, and only that node's host costs stretch (ranks/cores). Ping-pong,
// 0 bytes, o_s = o_r = 2, no pass cost: half a round trip is o_s + path + o_r.
TEST(Placement, OversubscribedNodesStretchTheirOwnRanksOnly)
{
  PlatformSpec p = base();
  p.cores = 2;
  p.oversubscribe = true;
  p.send_overhead_us = 2;
  p.recv_overhead_us = 2;
  WorkloadSpec w = placed(WorkloadKind::PingPong, 2, 1, Placement::Map, {0, 0});
  // Both ranks on node 0, 2 cores: no stretch, 2 + 0.5 + 2 = 4.5.
  EXPECT_NEAR(fields(simulate(p, w), "latency_us")[0], 4.5, 1e-9);
  p.cores = 1;  // 2 ranks on 1 core: stretch 2, 2 * 2 + 0.5 + 2 * 2 = 8.5
  EXPECT_NEAR(fields(simulate(p, w), "latency_us")[0], 8.5, 1e-9);
  w.node_map = {0, 1};  // one rank on each node: no stretch, 2 + 10 + 2 = 14
  EXPECT_NEAR(fields(simulate(p, w), "latency_us")[0], 14, 1e-9);
}
