// The one place a rank's node is decided: the workload's placement turned into a
// rank -> node map, and the map checked against a platform. Everything that asks where a
// rank runs (Sim::node_of, the transports, the NIC stage) reads this map.
#pragma once

#include "spec.hpp"

#include <vector>

namespace hopsim {

// The node of every rank. Block: rank r on node r / ranks_per_node. Cyclic: rank r on
// node r mod (ranks / ranks_per_node). Map: the workload's node_map as given.
std::vector<int> place_ranks(const WorkloadSpec& w);

// std::invalid_argument unless the placement fits platform p: for block and cyclic,
// ranks_per_node divides ranks and fits the cores; for every placement, each rank's node
// exists (0 <= node < p.nodes) and no node holds more ranks than it has cores (unless
// p.oversubscribe).
void check_placement(const PlatformSpec& p, const WorkloadSpec& w);

// Ranks on each node of the map, for nodes 0 .. (largest node used).
std::vector<int> ranks_on_nodes(const std::vector<int>& node_map);

}  // namespace hopsim
