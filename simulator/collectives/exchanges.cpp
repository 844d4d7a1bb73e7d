// The symmetric schedules (every rank runs the same steps): Alltoall, Allgather,
// Allreduce and Barrier algorithms of Open MPI's coll/base, v4.1.x
// (coll_base_alltoall.c, coll_base_allgather.c, coll_base_allreduce.c, coll_base_barrier.c).
// A message's tag is its step: both ends of an exchange are at the same step index.
#include "exchanges.hpp"

#include <algorithm>

namespace hopsim::coll {

namespace {

int floor_pow2(int n)
{
  int p = 1;
  while (p * 2 <= n)
    p *= 2;
  return p;
}

int log2_of(int p)
{
  int l = 0;
  while ((1 << l) < p)
    l++;
  return l;
}

// One exchange per step with a peer that depends on the step (sendrecv).
void exchange(Step& out, int to, int64_t bytes, int tag, bool reduce = false)
{
  out.sends.push_back({to, bytes, tag});
  out.recvs++;
  out.reduce = reduce;
}

}  // namespace

// ---- Alltoall ----------------------------------------------------------------------

// basic_linear (and linear_sync without a request limit, Open MPI's default): post every
// receive, then the sends to rank-1, rank-2, ..., and wait for all.
int AlltoallLinear::steps(int) const { return 1; }
void AlltoallLinear::step(int rank, int, Step& out) const
{
  out.clear();
  for (int i = 1; i < n_; i++)
    out.sends.push_back({(rank - i + n_) % n_, bytes_, 0});
  out.recvs = n_ - 1;
}

// pairwise: at step s, send to rank+s and receive from rank-s (the last, self, step is a
// local copy).
int AlltoallPairwise::steps(int) const { return n_ - 1; }
void AlltoallPairwise::step(int rank, int k, Step& out) const
{
  out.clear();
  exchange(out, (rank + k + 1) % n_, bytes_, k);
}

// modified Bruck: at distance d = 1, 2, 4, ... send to rank+d (receive from rank-d) the
// blocks whose index has bit d set.
int AlltoallBruck::steps(int) const { return log2_of(n_); }
void AlltoallBruck::step(int rank, int k, Step& out) const
{
  out.clear();
  int d = 1 << k;
  int64_t blocks = 0;
  for (int i = 1; i < n_; i++)
    blocks += (i & d) ? 1 : 0;
  exchange(out, (rank + d) % n_, blocks * bytes_, k);
}

// ---- Allgather ---------------------------------------------------------------------

int AllgatherRing::steps(int) const { return n_ - 1; }
void AllgatherRing::step(int rank, int k, Step& out) const
{
  out.clear();
  exchange(out, (rank + 1) % n_, bytes_, k);
}

// recursive_doubling (a power-of-two count of ranks): partner rank ^ 2^k, 2^k blocks.
int AllgatherRecursiveDoubling::steps(int) const { return log2_of(n_); }
void AllgatherRecursiveDoubling::step(int rank, int k, Step& out) const
{
  out.clear();
  exchange(out, rank ^ (1 << k), (int64_t{1} << k) * bytes_, k);
}

// bruck: at distance d, send to rank-d and receive from rank+d, min(d, n-d) blocks.
int AllgatherBruck::steps(int) const { return log2_of(n_); }
void AllgatherBruck::step(int rank, int k, Step& out) const
{
  out.clear();
  int d = 1 << k;
  int blocks = d <= (n_ >> 1) ? d : n_ - d;
  exchange(out, (rank - d + n_) % n_, blocks * bytes_, k);
}

// neighbor exchange (an even count of ranks): one block with the first neighbour, then
// n/2 - 1 exchanges of two blocks, alternating neighbours.
int AllgatherNeighbor::steps(int) const { return n_ / 2; }
void AllgatherNeighbor::step(int rank, int k, Step& out) const
{
  out.clear();
  bool even = rank % 2 == 0;
  int first = even ? (rank + 1) % n_ : (rank - 1 + n_) % n_;
  int second = even ? (rank - 1 + n_) % n_ : (rank + 1) % n_;
  if (k == 0)
    exchange(out, first, bytes_, 0);
  else
    exchange(out, k % 2 == 1 ? second : first, 2 * bytes_, k);
}

// ---- Allreduce ---------------------------------------------------------------------

// recursive_doubling: the first 2r ranks (r = n - 2^floor(log2 n)) pair up, the even one
// handing its vector to the odd one; 2^floor(log2 n) ranks exchange the whole vector
// with rank ^ 2^k; the odd ones hand the result back.
AllreduceRecursiveDoubling::AllreduceRecursiveDoubling(int n, int64_t bytes)
    : n_(n), bytes_(bytes), adjsize_(floor_pow2(n)), extra_(n - floor_pow2(n))
{
}
int AllreduceRecursiveDoubling::steps(int) const { return 2 + log2_of(adjsize_); }
void AllreduceRecursiveDoubling::step(int rank, int k, Step& out) const
{
  out.clear();
  int last = steps(rank) - 1;
  bool paired = rank < 2 * extra_;
  if (k == 0 || k == last) {
    if (not paired)
      return;
    bool even = rank % 2 == 0;
    if (k == 0 && even)
      out.sends.push_back({rank + 1, bytes_, 0});
    if (k == 0 && not even) {
      out.recvs = 1;
      out.reduce = true;
    }
    if (k == last && even)
      out.recvs = 1;
    if (k == last && not even)
      out.sends.push_back({rank - 1, bytes_, last});
    return;
  }
  if (paired && rank % 2 == 0)
    return;
  int newrank = paired ? rank >> 1 : rank - extra_;
  int newremote = newrank ^ (1 << (k - 1));
  int remote = newremote < extra_ ? newremote * 2 + 1 : newremote + extra_;
  exchange(out, remote, bytes_, k, true);
}

// ring: a reduce-scatter of n blocks in n-1 steps, then an allgather in n-1 steps; the
// first count % n blocks hold one element more.
AllreduceRing::AllreduceRing(int n, int64_t count, int64_t element)
    : n_(n), count_(count), element_(element)
{
}
int64_t AllreduceRing::block_bytes(int block) const
{
  int64_t late = count_ / n_;
  int64_t split = count_ % n_;
  return (block < split ? late + 1 : late) * element_;
}
int AllreduceRing::steps(int) const { return 2 * (n_ - 1); }
void AllreduceRing::step(int rank, int k, Step& out) const
{
  out.clear();
  int to = (rank + 1) % n_;
  if (k < n_ - 1)
    exchange(out, to, block_bytes(((rank - k) % n_ + n_) % n_), k, true);
  else
    exchange(out, to, block_bytes(((rank + 1 - (k - (n_ - 1))) % n_ + n_) % n_), k);
}

// Rabenseifner (redscat_allgather, redscat_gather): the first 2r ranks fold into their
// even neighbour (halves exchanged and reduced, then the odd one's half sent over);
// recursive halving reduce-scatter with distance doubling over 2^floor(log2 n) ranks. Then
// Allreduce runs the allgather in reverse and the even ranks hand the result to their odd
// neighbour; Reduce gathers the pieces to virtual rank 0 along a binomial tree, largest
// distance first, each rank sending once (at its highest set bit) what it has gathered.
Rabenseifner::Rabenseifner(int n, int64_t count, int64_t element, Tail tail)
    : tail_(tail), n_(n), count_(count), element_(element), pof2_(floor_pow2(n)), rem_(n - floor_pow2(n)),
      nsteps_(log2_of(floor_pow2(n)))
{
}
int Rabenseifner::steps(int) const { return (tail_ == Tail::Allgather ? 3 : 2) + 2 * nsteps_; }
void Rabenseifner::step(int rank, int k, Step& out) const
{
  out.clear();
  int last = steps(rank) - 1;
  bool paired = rank < 2 * rem_;
  bool odd = rank % 2 != 0;
  int64_t lhalf = count_ / 2, rhalf = count_ - count_ / 2;
  if (k == 0) {
    if (paired)
      odd ? exchange(out, rank - 1, lhalf * element_, 0, true) : exchange(out, rank + 1, rhalf * element_, 0, true);
    return;
  }
  if (k == 1) {
    if (paired && odd)
      out.sends.push_back({rank - 1, rhalf * element_, 1});
    if (paired && not odd)
      out.recvs = 1;
    return;
  }
  if (tail_ == Tail::Allgather && k == last) {
    if (paired && not odd)
      out.sends.push_back({rank + 1, count_ * element_, last});
    if (paired && odd)
      out.recvs = 1;
    return;
  }
  if (paired && odd)
    return;
  int vrank = paired ? rank / 2 : rank - rem_;
  auto real = [this](int v) { return v < rem_ ? v * 2 : v + rem_; };
  // Replay the window halving up to this step: (send, receive) counts per step.
  int64_t wsize = count_;
  std::vector<std::pair<int64_t, int64_t>> counts;
  for (int mask = 1; mask < pof2_; mask <<= 1) {
    int64_t rcount = rank < real(vrank ^ mask) ? wsize / 2 : wsize - wsize / 2;
    counts.push_back({wsize - rcount, rcount});
    wsize = rcount;
  }
  int s = k - 2;  // 0 .. 2 nsteps - 1
  int index = s < nsteps_ ? s : 2 * nsteps_ - 1 - s;
  int mask = 1 << index;
  int dest = real(vrank ^ mask);
  if (s < nsteps_) {
    exchange(out, dest, counts[index].first * element_, k, true);
  } else if (tail_ == Tail::Allgather) {  // the allgather sends what the reduce-scatter kept
    exchange(out, dest, counts[index].second * element_, k);
  } else if ((vrank ^ mask) < mask && (vrank & mask)) {  // mask is vrank's highest bit
    out.sends.push_back({dest, counts[index].second * element_, k});
  } else if (vrank < mask) {  // still gathering: the piece of the subtree vrank + mask
    out.recvs = 1;
  }
}

// ---- Barrier -----------------------------------------------------------------------

// recursive_doubling: ranks above 2^floor(log2 n) pair with rank - 2^floor(log2 n) (their
// zero-byte message is answered only once that rank is through), the others exchange
// with rank ^ 2^k.
BarrierRecursiveDoubling::BarrierRecursiveDoubling(int n) : n_(n), adjsize_(floor_pow2(n)) {}
int BarrierRecursiveDoubling::steps(int) const { return 2 + log2_of(adjsize_); }
void BarrierRecursiveDoubling::step(int rank, int k, Step& out) const
{
  out.clear();
  int last = steps(rank) - 1;
  if (k == 0) {
    if (rank >= adjsize_)
      exchange(out, rank - adjsize_, 0, 0);
    else if (rank < n_ - adjsize_)
      out.recvs = 1;
    return;
  }
  if (k == last) {
    if (rank < n_ - adjsize_)
      out.sends.push_back({rank + adjsize_, 0, 0});
    return;
  }
  if (rank < adjsize_)
    exchange(out, rank ^ (1 << (k - 1)), 0, k);
}

// bruck (dissemination): at distance d send to rank+d, receive from rank-d.
int BarrierBruck::steps(int) const { return log2_of(n_); }
void BarrierBruck::step(int rank, int k, Step& out) const
{
  out.clear();
  exchange(out, (rank + (1 << k)) % n_, 0, k);
}

// tree: up a binomial tree by rank ^ jump, then back down; blocking sends and receives.
int BarrierTree::steps(int) const { return 2 * log2_of(n_); }
void BarrierTree::step(int rank, int k, Step& out) const
{
  out.clear();
  int levels = log2_of(n_);
  bool up = k < levels;
  int jump = up ? 1 << k : 1 << (2 * levels - 1 - k);
  int partner = rank ^ jump;
  if ((partner & (jump - 1)) != 0 || partner >= n_)
    return;
  bool receive = up ? partner > rank : partner < rank;
  if (receive)
    out.recvs = 1;
  else
    out.sends.push_back({partner, 0, k});
}

}  // namespace hopsim::coll
