// Every collective schedule, for every algorithm and communicator sizes 1..40: each
// message goes to another rank, each step receives exactly the messages tagged for it,
// and running the steps in order (a step starts once the previous ended) never stalls.
#include "collectives/schedule.hpp"
#include "collectives/trees.hpp"

#include <gtest/gtest.h>

#include <map>

using namespace hopsim::coll;

namespace {

int64_t element_of(Collective c) { return c == Collective::Allreduce || c == Collective::Reduce ? 4 : 1; }

// Runs the schedule with unlimited buffering; returns the steps left undone.
int stalled_steps(const Schedule& s, int n, std::string* problem)
{
  std::vector<int> step(n, 0);
  std::vector<bool> posted(n, false);
  std::map<std::pair<int, int>, int> arrived;  // (rank, tag) -> messages
  Step st;
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < n; r++)
      while (step[r] < s.steps(r)) {
        s.step(r, step[r], st);
        if (not posted[r]) {
          for (const Send& x : st.sends) {
            if (x.to == r || x.to < 0 || x.to >= n || x.bytes < 0)
              *problem = "rank " + std::to_string(r) + " sends to " + std::to_string(x.to);
            arrived[{x.to, x.tag}]++;
          }
          posted[r] = true;
          progress = true;
        }
        int& got = arrived[{r, step[r]}];
        if (got < st.recvs)
          break;
        got -= st.recvs;
        step[r]++;
        posted[r] = false;
        progress = true;
      }
  }
  for (const auto& [key, count] : arrived)
    if (count != 0)
      *problem = std::to_string(count) + " unreceived messages for rank " + std::to_string(key.first);
  int left = 0;
  for (int r = 0; r < n; r++)
    left += s.steps(r) - step[r];
  return left;
}

}  // namespace

TEST(Collectives, EverySchedulePairsItsMessagesAndCompletes)
{
  for (Collective c : {Collective::Alltoall, Collective::Allreduce, Collective::Allgather, Collective::Bcast,
                       Collective::Reduce, Collective::Barrier})
    for (const std::string& a : algorithms(c))
      for (int n = 1; n <= 40; n++)
        for (int64_t bytes : {int64_t{4}, int64_t{64}, int64_t{4096}, int64_t{1} << 20}) {
          if (a == "two_proc" && n != 2)
            continue;
          auto s = make_schedule(c, a, n, bytes, element_of(c));
          std::string problem;
          EXPECT_EQ(stalled_steps(*s, n, &problem), 0) << collective_name(c) << " " << a << " n=" << n;
          EXPECT_EQ(problem, "") << collective_name(c) << " " << a << " n=" << n << " bytes=" << bytes;
        }
}

TEST(Collectives, AlltoallMovesEveryBlockOnce)
{
  // linear and pairwise send each of the n - 1 other blocks once; Bruck sends
  // sum over steps of the blocks whose index has that bit set (more bytes, fewer steps).
  for (int n : {2, 5, 8, 13}) {
    for (const char* a : {"linear", "pairwise"}) {
      auto s = make_schedule(Collective::Alltoall, a, n, 10, 1);
      int64_t sent = 0;
      Step st;
      for (int k = 0; k < s->steps(0); k++) {
        s->step(0, k, st);
        for (const Send& x : st.sends)
          sent += x.bytes;
      }
      EXPECT_EQ(sent, 10 * (n - 1)) << a << " n=" << n;
    }
  }
}

TEST(Collectives, TreesReachEveryRankOnce)
{
  for (Tree t : {Tree::Linear, Tree::Chain, Tree::Binary, Tree::Binomial, Tree::InOrderBinomial, Tree::Knomial4,
                 Tree::InOrderBinary})
    for (int n = 1; n <= 70; n++)
      for (int root : {0, n / 2}) {
        int tree_root = t == Tree::InOrderBinary ? n - 1 : root;
        std::vector<int> parent_count(n, 0);
        for (int r = 0; r < n; r++) {
          TreeNode node = tree_node(t, n, root, r);
          EXPECT_EQ(node.parent < 0, r == tree_root) << static_cast<int>(t) << " n=" << n << " r=" << r;
          for (int child : node.children) {
            parent_count[child]++;
            EXPECT_EQ(tree_node(t, n, root, child).parent, r);
          }
        }
        for (int r = 0; r < n; r++)
          EXPECT_EQ(parent_count[r], r == tree_root ? 0 : 1) << static_cast<int>(t) << " n=" << n << " r=" << r;
      }
}

TEST(Collectives, OpenMpiDecisionAtItsBracketEdges)
{
  // coll_tuned_decision_fixed.c, v4.1.4: Alltoall, 8 to 15 ranks (lines 289-294):
  // below 262144 B linear_sync (4), from it linear (1).
  EXPECT_EQ(openmpi_decision(Collective::Alltoall, 15, 262143), 4);
  EXPECT_EQ(openmpi_decision(Collective::Alltoall, 15, 262144), 1);
  EXPECT_EQ(openmpi_decision(Collective::Alltoall, 16, 3), 4);  // 16 to 31 ranks, < 4 B
  // Barrier by communicator size only (lines 482-498).
  EXPECT_EQ(openmpi_decision(Collective::Barrier, 63, 0), 3);
  EXPECT_EQ(openmpi_decision(Collective::Barrier, 64, 0), 4);
  EXPECT_EQ(openmpi_decision(Collective::Barrier, 4096, 0), 4);
  EXPECT_EQ(openmpi_algorithm_name(Collective::Bcast, 7), "knomial");
}
