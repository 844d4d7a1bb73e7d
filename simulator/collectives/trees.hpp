// The trees of Open MPI's coll/base (coll_base_topo.c, v4.1.x), rebuilt per rank: the
// parent (-1 for the root) and the children in the order Open MPI sends to them.
#pragma once

#include <vector>

namespace hopsim::coll {

enum class Tree {
  Linear,         // the root is everyone's parent (basic_linear)
  Chain,          // root -> root+1 -> ... (chain with one chain, pipeline)
  Binary,         // ompi_coll_base_topo_build_tree(2, ...)
  Binomial,       // ompi_coll_base_topo_build_bmtree
  InOrderBinomial,  // ompi_coll_base_topo_build_in_order_bmtree
  Knomial4,       // ompi_coll_base_topo_build_kmtree, radix 4 (coll_tuned_bcast_knomial_radix)
  InOrderBinary,  // ompi_coll_base_topo_build_in_order_bintree (rooted at ranks - 1)
};

struct TreeNode {
  int parent = -1;
  std::vector<int> children;
};

// Rank's place in the tree over `ranks` ranks rooted at `root` (InOrderBinary ignores
// root: Open MPI roots it at ranks - 1).
TreeNode tree_node(Tree t, int ranks, int root, int rank);

}  // namespace hopsim::coll
