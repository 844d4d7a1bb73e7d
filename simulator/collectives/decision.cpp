// Open MPI 4.1.x's fixed decision rules, transcribed from
// ompi/mca/coll/tuned/coll_tuned_decision_fixed.c at tag v4.1.4 (Debian 12's Open MPI),
// the commutative branches (IMB reduces with MPI_SUM). Each table is the source's if/else
// chain: per communicator-size bracket (sizes below `below`), the message-size brackets
// (bytes below `below` take `alg`), the last one open-ended. Line numbers are that file's.
#include "schedule.hpp"

#include <climits>
#include <stdexcept>
#include <vector>

namespace hopsim::coll {

namespace {

struct Band {
  int64_t below;
  int alg;
};
struct Bracket {
  int64_t below;  // communicator size
  std::vector<Band> bands;
};
constexpr int64_t kAny = INT64_MAX;

int look_up(const std::vector<Bracket>& table, int ranks, int64_t bytes)
{
  for (const Bracket& b : table) {
    if (ranks >= b.below)
      continue;
    for (const Band& band : b.bands)
      if (bytes < band.below)
        return band.alg;
  }
  throw std::logic_error("decision table without an open end");
}

// Lines 117-210 (ompi_op_is_commute branch).
const std::vector<Bracket> kAllreduce = {
    {4, {{8, 4}, {4096, 3}, {8192, 4}, {16384, 3}, {65536, 4}, {262144, 5}, {kAny, 6}}},
    {8, {{16, 4}, {8192, 3}, {kAny, 6}}},
    {16, {{8192, 3}, {kAny, 6}}},
    {32, {{64, 5}, {4096, 3}, {kAny, 6}}},
    {64, {{128, 5}, {kAny, 6}}},
    {128, {{262144, 3}, {kAny, 6}}},
    {256, {{131072, 2}, {262144, 3}, {kAny, 6}}},
    {512, {{4096, 2}, {kAny, 6}}},
    {2048, {{2048, 2}, {16384, 3}, {kAny, 6}}},
    {4096, {{2048, 2}, {4096, 5}, {16384, 3}, {kAny, 6}}},
    {kAny, {{2048, 2}, {16384, 5}, {32768, 3}, {kAny, 6}}},
};

// Lines 256-409.
const std::vector<Bracket> kAlltoall = {
    {3, {{2, 2}, {4, 5}, {16, 2}, {64, 5}, {256, 2}, {4096, 5}, {32768, 2}, {262144, 4}, {1048576, 5}, {kAny, 2}}},
    {8, {{8192, 4}, {16384, 1}, {65536, 4}, {524288, 1}, {1048576, 2}, {kAny, 1}}},
    {16, {{262144, 4}, {kAny, 1}}},
    {32, {{4, 4}, {512, 3}, {8192, 4}, {32768, 1}, {262144, 4}, {524288, 1}, {kAny, 4}}},
    {64, {{512, 3}, {524288, 1}, {kAny, 4}}},
    {128, {{1024, 3}, {2048, 1}, {4096, 4}, {262144, 1}, {kAny, 2}}},
    {256, {{1024, 3}, {2048, 4}, {262144, 1}, {kAny, 2}}},
    {512, {{1024, 3}, {8192, 4}, {32768, 1}, {kAny, 2}}},
    {1024, {{512, 3}, {8192, 4}, {16384, 1}, {131072, 4}, {262144, 1}, {kAny, 2}}},
    {2048, {{512, 3}, {1024, 4}, {2048, 1}, {16384, 4}, {262144, 1}, {kAny, 4}}},
    {4096, {{1024, 3}, {4096, 4}, {8192, 1}, {131072, 4}, {kAny, 1}}},
    {kAny, {{2048, 3}, {8192, 4}, {16384, 1}, {32768, 4}, {65536, 1}, {kAny, 4}}},
};

// Lines 482-498: the communicator size only.
const std::vector<Bracket> kBarrier = {
    {4, {{kAny, 3}}}, {8, {{kAny, 1}}}, {64, {{kAny, 3}}}, {256, {{kAny, 4}}},
    {512, {{kAny, 6}}}, {1024, {{kAny, 4}}}, {4096, {{kAny, 6}}}, {kAny, {{kAny, 4}}},
};

// Lines 540-651.
const std::vector<Bracket> kBcast = {
    {4, {{32, 3}, {256, 5}, {512, 3}, {1024, 7}, {32768, 1}, {131072, 5}, {262144, 2}, {524288, 1}, {1048576, 6}, {kAny, 5}}},
    {8, {{64, 5}, {128, 6}, {2048, 5}, {8192, 6}, {1048576, 1}, {kAny, 2}}},
    {16, {{8, 7}, {64, 5}, {4096, 7}, {16384, 5}, {32768, 6}, {kAny, 1}}},
    {32, {{4096, 7}, {1048576, 6}, {kAny, 8}}},
    {64, {{2048, 6}, {kAny, 7}}},
    {128, {{kAny, 7}}},
    {256, {{2, 6}, {16384, 5}, {32768, 1}, {65536, 5}, {kAny, 7}}},
    {1024, {{16384, 7}, {32768, 4}, {kAny, 7}}},
    {2048, {{524288, 7}, {kAny, 8}}},
    {4096, {{262144, 7}, {kAny, 8}}},
    {kAny, {{8192, 7}, {16384, 5}, {262144, 7}, {kAny, 8}}},
};

// Lines 735-813 (commutative branch).
const std::vector<Bracket> kReduce = {
    {4, {{8, 7}, {16, 4}, {32, 3}, {262144, 1}, {524288, 3}, {1048576, 2}, {kAny, 3}}},
    {8, {{4096, 4}, {65536, 2}, {262144, 5}, {524288, 1}, {1048576, 5}, {kAny, 1}}},
    {16, {{8192, 4}, {kAny, 5}}},
    {32, {{4096, 4}, {kAny, 5}}},
    {256, {{kAny, 5}}},
    {512, {{8192, 5}, {16384, 6}, {kAny, 5}}},
    {2048, {{kAny, 5}}},
    {4096, {{512, 5}, {1024, 6}, {8192, 5}, {16384, 6}, {kAny, 5}}},
    {kAny, {{16, 5}, {32, 6}, {1024, 5}, {2048, 6}, {8192, 5}, {16384, 6}, {kAny, 5}}},
};

// Lines 1114-1228.
const std::vector<Bracket> kAllgather = {
    {3, {{kAny, 6}}},
    {32, {{kAny, 3}}},
    {64, {{1024, 3}, {65536, 5}, {kAny, 4}}},
    {128, {{512, 3}, {65536, 5}, {kAny, 4}}},
    {256, {{512, 3}, {131072, 5}, {524288, 4}, {1048576, 5}, {kAny, 4}}},
    {512, {{32, 3}, {128, 2}, {1024, 3}, {131072, 5}, {524288, 4}, {1048576, 5}, {kAny, 4}}},
    {1024, {{64, 3}, {256, 2}, {2048, 3}, {kAny, 5}}},
    {2048, {{4, 3}, {8, 2}, {16, 3}, {32, 2}, {256, 3}, {512, 2}, {4096, 3}, {kAny, 5}}},
    {4096, {{32, 2}, {128, 3}, {512, 2}, {4096, 3}, {kAny, 5}}},
    {kAny, {{2, 3}, {8, 2}, {16, 3}, {512, 2}, {4096, 3}, {kAny, 5}}},
};

// The algorithm names of coll_tuned_<collective>_decision.c, by number (index 0 unused).
const std::vector<std::string>& names(Collective c)
{
  static const std::vector<std::string> alltoall = {"", "linear", "pairwise", "modified_bruck", "linear_sync", "two_proc"};
  static const std::vector<std::string> allreduce = {"", "basic_linear", "nonoverlapping", "recursive_doubling",
                                                     "ring", "segmented_ring", "rabenseifner"};
  static const std::vector<std::string> allgather = {"", "linear", "bruck", "recursive_doubling", "ring", "neighbor", "two_proc"};
  static const std::vector<std::string> bcast = {"", "basic_linear", "chain", "pipeline", "split_binary_tree", "binary_tree",
                                                 "binomial", "knomial", "scatter_allgather", "scatter_allgather_ring"};
  static const std::vector<std::string> reduce = {"", "linear", "chain", "pipeline", "binary", "binomial", "in-order_binary",
                                                  "rabenseifner"};
  static const std::vector<std::string> barrier = {"", "linear", "double_ring", "recursive_doubling", "bruck", "two_proc", "tree"};
  switch (c) {
    case Collective::Alltoall: return alltoall;
    case Collective::Allreduce: return allreduce;
    case Collective::Allgather: return allgather;
    case Collective::Bcast: return bcast;
    case Collective::Reduce: return reduce;
    case Collective::Barrier: return barrier;
  }
  return barrier;
}

}  // namespace

int openmpi_decision(Collective c, int ranks, int64_t bytes)
{
  switch (c) {
    case Collective::Alltoall: return look_up(kAlltoall, ranks, bytes);
    case Collective::Allreduce: return look_up(kAllreduce, ranks, bytes);
    case Collective::Allgather: return look_up(kAllgather, ranks, bytes);
    case Collective::Bcast: return look_up(kBcast, ranks, bytes);
    case Collective::Reduce: return look_up(kReduce, ranks, bytes);
    case Collective::Barrier: return look_up(kBarrier, ranks, bytes);
  }
  return 0;
}

std::string openmpi_algorithm_name(Collective c, int number)
{
  const auto& n = names(c);
  if (number < 1 || number >= static_cast<int>(n.size()))
    throw std::invalid_argument("no Open MPI algorithm number " + std::to_string(number));
  return n[number];
}

}  // namespace hopsim::coll
