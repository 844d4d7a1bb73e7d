// Open MPI's broadcasts that split the message, from coll_base_bcast.c at v4.1.4
// (ompi_coll_base_bcast_intra_split_bintree, ompi_coll_base_bcast_intra_scatter_allgather),
// with segsize 0 as 4.1's fixed rules pass it. Their sends and receives are blocking, so
// each one is a step of its own.
#include "split_bcast.hpp"

#include "trees.hpp"

#include <algorithm>

namespace hopsim::coll {

// Step 0: the half of the rank's subtree from its parent (the left subtree, odd ranks,
// carries the first ceil(count/2) elements, the right one the rest). Steps 1, 2: that half
// to each child in turn (the root sends each child its half). Step 3: the pairs exchange
// halves, rank r (odd) with r + 1; on an even count of ranks the root sends the second half
// to the last rank, which has no pair.
void BcastSplitBinary::step(int rank, int k, Step& out) const
{
  out.clear();
  int lr = (rank + 1) % 2;  // 0: left subtree (odd ranks); the root counts as right
  if (k == 0) {
    if (rank != 0)
      out.recvs = 1;
    return;
  }
  if (k <= 2) {
    TreeNode node = tree_node(Tree::Binary, n_, 0, rank);
    size_t i = static_cast<size_t>(k - 1);
    if (i < node.children.size())
      out.sends.push_back({node.children[i], half(rank == 0 ? static_cast<int>(i) : lr), 0});
    return;
  }
  bool even = n_ % 2 == 0;
  if (rank == 0) {
    if (even)
      out.sends.push_back({n_ - 1, half(1), 3});
    return;
  }
  if (even && rank == n_ - 1) {
    out.recvs = 1;
    return;
  }
  int pair = lr == 0 ? (rank + 1) % n_ : rank - 1;
  out.sends.push_back({pair, half(lr), 3});
  out.recvs = 1;
}

BcastScatterAllgather::BcastScatterAllgather(int n, int64_t count, int64_t element)
    : n_(n), count_(count), element_(element), block_((count + n - 1) / n), masks_(0)
{
  while ((1 << masks_) < n)
    masks_++;
}

// Rank v's block is elements [v x block, (v + 1) x block) of the message, cut at its end.
int64_t BcastScatterAllgather::held(int first, int span) const
{
  int64_t end = std::min(count_, (int64_t{first} + span) * block_);
  return std::max<int64_t>(0, end - int64_t{first} * block_) * element_;
}

// Step 0: rank v receives the blocks of its binomial subtree, [v, v + lowbit(v)), from
// v - lowbit(v) (if the message reaches that far). Steps 1..masks: it sends, mask by mask
// from the largest below its lowest set bit, the blocks [v + mask, v + 2 mask) to v + mask.
// Then per mask the recursive-doubling exchange with v ^ mask, and, where the partner's
// group is beyond the last rank, the halving hand-over within the group (allgather()).
void BcastScatterAllgather::step(int rank, int k, Step& out) const
{
  out.clear();
  int v = rank;
  int lowbit = v == 0 ? 1 << masks_ : v & -v;
  if (k == 0) {
    if (v != 0 && count_ > int64_t{v} * block_)
      out.recvs = 1;
    return;
  }
  if (k <= masks_) {
    int mask = 1 << (masks_ - k);
    if (mask < lowbit && v + mask < n_ && held(v + mask, mask) > 0)
      out.sends.push_back({v + mask, held(v + mask, mask), 0});
    return;
  }
  int j = 0;
  while (allgather_step(j + 1) <= k)
    j++;
  allgather(v, j, k, out);
}

void BcastScatterAllgather::allgather(int v, int j, int k, Step& out) const
{
  int mask = 1 << j;
  int group = v & ~(mask - 1);  // the ranks whose blocks v holds before this mask
  int base = allgather_step(j);
  if (k == base) {
    if ((v ^ mask) < n_) {
      out.sends.push_back({v ^ mask, held(group, mask), base});  // possibly 0 bytes
      out.recvs = 1;
    }
    return;
  }
  // The partner group does not exist: the ranks of this group that had a partner pass
  // what they received down a halving tree to those that had none.
  if ((group ^ mask) + mask <= n_)
    return;
  int alldata = n_ - group - mask;
  int rh = 1 << (j - (k - base));
  int vr = v ^ rh;
  int top = v & ~(2 * rh - 1);
  if (vr > v && v < top + alldata && vr >= top + alldata)
    out.sends.push_back({vr, held(group ^ mask, mask), k});
  else if (vr < v && vr < top + alldata && v >= top + alldata)
    out.recvs = 1;
}

}  // namespace hopsim::coll
