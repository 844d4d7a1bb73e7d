#include "trees.hpp"

namespace hopsim::coll {

namespace {

int pown(int fanout, int level)
{
  int v = 1;
  for (int i = 0; i < level; i++)
    v *= fanout;
  return v;
}

// coll_base_topo.c's calculate_level and calculate_num_nodes_up_to_level.
int level_of(int fanout, int rank)
{
  int level = 0;
  for (int num = 0; num <= rank; level++)
    num += pown(fanout, level);
  return level - 1;
}

int nodes_up_to_level(int fanout, int level) { return (pown(fanout, level) - 1) / (fanout - 1); }

TreeNode fanout_tree(int fanout, int n, int root, int rank)
{
  TreeNode node;
  int s = (rank - root + n) % n;
  int level = level_of(fanout, s);
  int delta = pown(fanout, level);
  for (int i = 0; i < fanout; i++) {
    int child = s + delta * (i + 1);
    if (child >= n)
      break;
    node.children.push_back((child + root) % n);
  }
  if (s == 0)
    return node;
  int parent = s;
  if (parent < fanout) {
    parent = 0;
  } else {
    int limit = nodes_up_to_level(fanout, level);
    while (parent >= limit)
      parent -= delta / fanout;
  }
  node.parent = (parent + root) % n;
  return node;
}

int next_power_of_two_above(int v)  // opal_next_poweroftwo: the least power of two > v
{
  int p = 1;
  while (p <= v)
    p <<= 1;
  return p;
}

TreeNode in_order_bintree(int n, int rank)
{
  TreeNode node;
  int size = n, myrank = rank, parent = n - 1, delta = 0;
  for (;;) {
    int rightsize = size >> 1;
    int lchild = -1, rchild = -1;
    if (size - 1 > 0) {
      lchild = parent - 1;
      if (lchild > 0)
        rchild = rightsize - 1;
    }
    if (myrank == parent) {
      if (lchild >= 0)
        node.children.push_back(lchild + delta);
      if (rchild >= 0)
        node.children.push_back(rchild + delta);
      return node;
    }
    if (myrank > rchild) {
      if (myrank == lchild)
        node.parent = parent + delta;
      size = size - rightsize - 1;
      delta += rightsize;
      myrank -= rightsize;
      parent = size - 1;
    } else {
      if (myrank == rchild)
        node.parent = parent + delta;
      size = rightsize;
      parent = rchild;
    }
  }
}

}  // namespace

TreeNode tree_node(Tree t, int n, int root, int rank)
{
  TreeNode node;
  int v = (rank - root + n) % n;
  switch (t) {
    case Tree::Linear:
      if (v == 0) {
        for (int i = 0; i < n; i++)
          if (i != root)
            node.children.push_back(i);
      } else {
        node.parent = root;
      }
      return node;
    case Tree::Chain:
      if (v > 0)
        node.parent = (v - 1 + root) % n;
      if (v + 1 < n)
        node.children.push_back((v + 1 + root) % n);
      return node;
    case Tree::Binary:
      return fanout_tree(2, n, root, rank);
    case Tree::Binomial: {
      int mask = next_power_of_two_above(v);
      if (v != 0)
        node.parent = ((v ^ (mask >> 1)) + root) % n;
      for (; mask < n; mask <<= 1) {
        int remote = v ^ mask;
        if (remote >= n)
          break;
        node.children.push_back((remote + root) % n);
      }
      return node;
    }
    case Tree::InOrderBinomial:
      for (int mask = 1; mask < n; mask <<= 1) {
        int remote = v ^ mask;
        if (remote < v) {
          node.parent = (remote + root) % n;
          break;
        }
        if (remote < n)
          node.children.push_back((remote + root) % n);
      }
      return node;
    case Tree::Knomial4: {
      const int radix = 4;
      int mask = 1;
      while (mask < n) {
        if (v % (radix * mask)) {
          node.parent = (v / (radix * mask) * (radix * mask) + root) % n;
          break;
        }
        mask *= radix;
      }
      for (mask /= radix; mask > 0; mask /= radix)
        for (int r = 1; r < radix; r++) {
          int child = v + mask * r;
          if (child < n)
            node.children.push_back((child + root) % n);
        }
      return node;
    }
    case Tree::InOrderBinary:
      return in_order_bintree(n, rank);
  }
  return node;
}

}  // namespace hopsim::coll
