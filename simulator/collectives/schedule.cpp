// Algorithm names to schedules, with the switches Open MPI's implementations make
// themselves (coll_base_*.c at v4.1.4, cited by line in docs/workloads.md).
#include "schedule.hpp"

#include "exchanges.hpp"
#include "rooted.hpp"
#include "split_bcast.hpp"

#include <stdexcept>

namespace hopsim::coll {

namespace {

bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

int floor_pow2(int n)
{
  int p = 1;
  while (p * 2 <= n)
    p *= 2;
  return p;
}

[[noreturn]] void unknown(Collective c, const std::string& algorithm)
{
  std::string list;
  for (const std::string& a : algorithms(c))
    list += (list.empty() ? "" : ", ") + a;
  throw std::invalid_argument("algorithm: " + std::string(collective_name(c)) + " has no algorithm '" + algorithm +
                              "' (known: " + list + ")");
}

void need_two(Collective c, const std::string& algorithm, int ranks)
{
  if (ranks != 2)
    throw std::invalid_argument("algorithm: " + std::string(collective_name(c)) + " " + algorithm +
                                " runs on exactly 2 ranks, got " + std::to_string(ranks));
}

std::unique_ptr<Schedule> decided(Collective c, int ranks, int64_t bytes, int64_t element)
{
  std::string name = openmpi_algorithm_name(c, openmpi_decision(c, ranks, bytes));
  return make_schedule(c, name, ranks, bytes, element);
}

}  // namespace

Collective collective_from(const std::string& name)
{
  if (name == "alltoall") return Collective::Alltoall;
  if (name == "allreduce") return Collective::Allreduce;
  if (name == "allgather") return Collective::Allgather;
  if (name == "bcast") return Collective::Bcast;
  if (name == "reduce") return Collective::Reduce;
  if (name == "barrier") return Collective::Barrier;
  throw std::invalid_argument("unknown collective '" + name + "'");
}

const char* collective_name(Collective c)
{
  switch (c) {
    case Collective::Alltoall: return "alltoall";
    case Collective::Allreduce: return "allreduce";
    case Collective::Allgather: return "allgather";
    case Collective::Bcast: return "bcast";
    case Collective::Reduce: return "reduce";
    case Collective::Barrier: return "barrier";
  }
  return "";
}

std::vector<std::string> algorithms(Collective c)
{
  switch (c) {
    case Collective::Alltoall: return {"linear", "pairwise", "modified_bruck", "linear_sync", "two_proc"};
    case Collective::Allreduce:
      return {"basic_linear", "nonoverlapping", "recursive_doubling", "ring", "segmented_ring", "rabenseifner"};
    case Collective::Allgather: return {"bruck", "recursive_doubling", "ring", "neighbor", "two_proc"};
    case Collective::Bcast:
      return {"basic_linear", "chain", "pipeline", "split_binary_tree", "binary_tree", "binomial", "knomial",
              "scatter_allgather"};
    case Collective::Reduce: return {"linear", "chain", "pipeline", "binary", "binomial", "in-order_binary", "rabenseifner"};
    case Collective::Barrier: return {"linear", "recursive_doubling", "bruck", "two_proc", "tree"};
  }
  return {};
}

std::unique_ptr<Schedule> make_schedule(Collective c, const std::string& a, int n, int64_t bytes, int64_t element)
{
  bool known = false;
  for (const std::string& name : algorithms(c))
    known = known || name == a;
  if (not known)
    unknown(c, a);
  // Open MPI's MPI layer returns before any algorithm for a count of 0 (mpi/c/*.c), and
  // one rank has nobody to talk to.
  if (n == 1 || (c != Collective::Barrier && bytes == 0))
    return std::make_unique<Nothing>();
  int64_t count = bytes / element;
  switch (c) {
    case Collective::Alltoall:
      if (a == "two_proc")
        need_two(c, a, n);
      if (a == "linear" || a == "linear_sync")  // linear_sync without a request limit is linear
        return std::make_unique<AlltoallLinear>(n, bytes);
      if (a == "modified_bruck")
        return std::make_unique<AlltoallBruck>(n, bytes);
      return std::make_unique<AlltoallPairwise>(n, bytes);  // two_proc: one sendrecv
    case Collective::Allgather:
      if (a == "two_proc")
        need_two(c, a, n);
      if (a == "recursive_doubling")
        return power_of_two(n) ? std::unique_ptr<Schedule>(std::make_unique<AllgatherRecursiveDoubling>(n, bytes))
                               : std::make_unique<AllgatherBruck>(n, bytes);
      if (a == "bruck")
        return std::make_unique<AllgatherBruck>(n, bytes);
      if (a == "neighbor" && n % 2 == 0)
        return std::make_unique<AllgatherNeighbor>(n, bytes);
      return std::make_unique<AllgatherRing>(n, bytes);  // ring, odd-sized neighbor, two_proc
    case Collective::Allreduce:
      if (a == "nonoverlapping")  // MPI_Reduce then MPI_Bcast, each as coll/tuned decides
        return std::make_unique<Sequence>(decided(Collective::Reduce, n, bytes, element),
                                          decided(Collective::Bcast, n, bytes, element));
      if (a == "basic_linear" || (a == "rabenseifner" && count < floor_pow2(n)))
        return std::make_unique<Sequence>(std::make_unique<TreeReduce>(Tree::Linear, n, 0, bytes),
                                          std::make_unique<TreeBcast>(Tree::Linear, n, 0, bytes));
      if (a == "rabenseifner")
        return std::make_unique<Rabenseifner>(n, count, element, Rabenseifner::Tail::Allgather);
      if ((a == "ring" || a == "segmented_ring") && count >= n)  // segsize 0: the plain ring
        return std::make_unique<AllreduceRing>(n, count, element);
      return std::make_unique<AllreduceRecursiveDoubling>(n, bytes);
    case Collective::Bcast: {
      // split_binary_tree falls back to the chain when a half would be empty (count 1),
      // scatter_allgather to the linear bcast below one element per rank.
      if (a == "split_binary_tree" && count >= 2)
        return std::make_unique<BcastSplitBinary>(n, count, element);
      if (a == "scatter_allgather" && count >= n)
        return std::make_unique<BcastScatterAllgather>(n, count, element);
      Tree t = a == "basic_linear" || a == "scatter_allgather"              ? Tree::Linear
               : a == "chain" || a == "pipeline" || a == "split_binary_tree" ? Tree::Chain
               : a == "binary_tree"                                         ? Tree::Binary
               : a == "knomial"                                             ? Tree::Knomial4
                                                                            : Tree::Binomial;
      return std::make_unique<TreeBcast>(t, n, 0, bytes);
    }
    case Collective::Reduce: {
      // rabenseifner switches to the linear reduce below 2^floor(log2 n) elements.
      if (a == "rabenseifner" && count >= floor_pow2(n))
        return std::make_unique<Rabenseifner>(n, count, element, Rabenseifner::Tail::GatherToRoot);
      Tree t = a == "linear" || a == "rabenseifner" ? Tree::Linear
               : a == "chain" || a == "pipeline"    ? Tree::Chain
               : a == "binary"                      ? Tree::Binary
               : a == "in-order_binary"             ? Tree::InOrderBinary
                                                    : Tree::InOrderBinomial;
      return std::make_unique<TreeReduce>(t, n, 0, bytes);
    }
    case Collective::Barrier:
      if (a == "two_proc")
        need_two(c, a, n);
      if (a == "linear")
        return std::make_unique<BarrierLinear>(n);
      if (a == "recursive_doubling")
        return std::make_unique<BarrierRecursiveDoubling>(n);
      if (a == "tree")
        return std::make_unique<BarrierTree>(n, 0);
      return std::make_unique<BarrierBruck>(n, 0);  // bruck, two_proc
  }
  unknown(c, a);
}

}  // namespace hopsim::coll
