#include "placement.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace hopsim {

namespace {

void require(bool ok, const std::string& message)
{
  if (not ok)
    throw std::invalid_argument(message);
}

}  // namespace

std::vector<int> place_ranks(const WorkloadSpec& w)
{
  if (w.placement == Placement::Map)
    return w.node_map;
  std::vector<int> map(static_cast<size_t>(std::max(w.ranks, 0)));
  int per_node = std::max(w.ranks_per_node, 1);
  int nodes = std::max(w.ranks / per_node, 1);
  for (int r = 0; r < w.ranks; r++)
    map[static_cast<size_t>(r)] = w.placement == Placement::Cyclic ? r % nodes : r / per_node;
  return map;
}

std::vector<int> ranks_on_nodes(const std::vector<int>& node_map)
{
  int top = node_map.empty() ? -1 : *std::max_element(node_map.begin(), node_map.end());
  std::vector<int> count(static_cast<size_t>(top + 1), 0);
  for (int n : node_map)
    count[static_cast<size_t>(n)]++;
  return count;
}

void check_placement(const PlatformSpec& p, const WorkloadSpec& w)
{
  if (w.placement != Placement::Map) {
    require(w.node_map.empty(), "node_map applies to an explicit placement (map) only");
    require(w.ranks_per_node > 0, "ranks per node must be positive");
    require(w.ranks % w.ranks_per_node == 0, "ranks (" + std::to_string(w.ranks) +
                                                 ") must be a multiple of ranks per node (" +
                                                 std::to_string(w.ranks_per_node) + ")");
    require(p.oversubscribe || w.ranks_per_node <= p.cores,
            "ranks per node (" + std::to_string(w.ranks_per_node) + ") exceeds the cores per node (" +
                std::to_string(p.cores) + "); set [nodes] oversubscribe = true to share cores");
    require(w.ranks / w.ranks_per_node <= p.nodes, std::to_string(w.ranks) + " ranks at " +
                                                       std::to_string(w.ranks_per_node) + " per node need " +
                                                       std::to_string(w.ranks / w.ranks_per_node) +
                                                       " nodes; the platform has " + std::to_string(p.nodes));
    return;
  }
  require(static_cast<int64_t>(w.node_map.size()) == w.ranks,
          "the placement map has " + std::to_string(w.node_map.size()) + " entries for " +
              std::to_string(w.ranks) + " ranks");
  for (size_t r = 0; r < w.node_map.size(); r++)
    require(w.node_map[r] >= 0 && w.node_map[r] < p.nodes,
            "the placement puts rank " + std::to_string(r) + " on node " + std::to_string(w.node_map[r]) +
                "; the platform has nodes 0 to " + std::to_string(p.nodes - 1));
  std::vector<int> count = ranks_on_nodes(w.node_map);
  for (size_t n = 0; n < count.size(); n++)
    require(p.oversubscribe || count[n] <= p.cores,
            "the placement puts " + std::to_string(count[n]) + " ranks on node " + std::to_string(n) +
                ", which has " + std::to_string(p.cores) + " cores; set [nodes] oversubscribe = true to share cores");
}

}  // namespace hopsim
