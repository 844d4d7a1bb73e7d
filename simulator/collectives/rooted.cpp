#include "rooted.hpp"

namespace hopsim::coll {

int TreeBcast::steps(int rank) const
{
  TreeNode node = tree_node(tree_, n_, root_, rank);
  return (node.parent >= 0 ? 1 : 0) + (node.children.empty() ? 0 : 1);
}

void TreeBcast::step(int rank, int k, Step& out) const
{
  out.clear();
  TreeNode node = tree_node(tree_, n_, root_, rank);
  if (node.parent >= 0 && k == 0) {
    out.recvs = 1;
    return;
  }
  for (int child : node.children)
    out.sends.push_back({child, bytes_, 0});  // the child's first step receives it
}

int TreeReduce::tree_steps(int rank) const
{
  TreeNode node = tree_node(tree_, n_, root_, rank);
  return (node.children.empty() ? 0 : 1) + (node.parent >= 0 ? 1 : 0);
}

int TreeReduce::steps(int rank) const
{
  int extra = tree_root() != root_ && (rank == root_ || rank == tree_root()) ? 1 : 0;
  return tree_steps(rank) + extra;
}

void TreeReduce::step(int rank, int k, Step& out) const
{
  out.clear();
  TreeNode node = tree_node(tree_, n_, root_, rank);
  int own = tree_steps(rank);
  if (k == own) {  // the in-order tree's root forwards the result to the real root
    if (rank == tree_root())
      out.sends.push_back({root_, bytes_, tree_steps(root_)});
    else
      out.recvs = 1;
    return;
  }
  if (not node.children.empty() && k == 0) {
    out.recvs = static_cast<int>(node.children.size());
    out.reduce = true;
    return;
  }
  // A parent receives every child's vector in its first step.
  out.sends.push_back({node.parent, bytes_, 0});
}

void BarrierLinear::step(int rank, int k, Step& out) const
{
  out.clear();
  if (rank == 0) {
    if (k == 0)
      out.recvs = n_ - 1;
    else
      for (int i = 1; i < n_; i++)
        out.sends.push_back({i, 0, 1});
    return;
  }
  if (k == 0)
    out.sends.push_back({0, 0, 0});
  else
    out.recvs = 1;
}

void Sequence::step(int rank, int k, Step& out) const
{
  int a = first_->steps(rank);
  if (k < a) {
    first_->step(rank, k, out);
    return;
  }
  second_->step(rank, k - a, out);
  for (Send& s : out.sends)
    s.tag += first_->steps(s.to);
}

}  // namespace hopsim::coll
