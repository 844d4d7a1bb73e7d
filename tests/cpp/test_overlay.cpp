// Overlay families against docs/overlays.md: the worked example, arcs and next hops that
// agree, routes that are shortest paths, the error messages, sizes near 4096, and the C
// library draws behind RayPlatform's random graph.
#include "overlay.hpp"
#include "overlays/glibc_rand.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <numeric>
#include <cmath>
#include <fstream>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <thread>

using namespace hopsim;

namespace {

std::vector<int> hops_from_bfs(const Overlay& o, int d) {  // distance of every rank to d
  const int n = o.size();
  std::vector<std::vector<int>> in(n);
  for (int u = 0; u < n; ++u)
    for (int v : o.out_neighbors(u)) in[v].push_back(u);
  std::vector<int> dist(n, -1);
  std::queue<int> q;
  dist[d] = 0;
  q.push(d);
  while (!q.empty()) {
    int v = q.front();
    q.pop();
    for (int u : in[v])
      if (dist[u] < 0) dist[u] = dist[v] + 1, q.push(u);
  }
  return dist;
}

// Every route, walked hop by hop on a fresh copy in the documented order.
RouteStats walked_statistics(const Overlay& o) {
  const int n = o.size();
  auto w = o.fresh();
  RouteStats st;
  st.relays.assign(n, 0);
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      std::vector<int> r = route(*w, s, d);
      if (r.size() > st.route_lengths.size()) st.route_lengths.resize(r.size(), 0);
      ++st.route_lengths[r.size() - 1];
      for (size_t i = 1; i + 1 < r.size(); ++i) ++st.relays[r[i]];
    }
  return st;
}

std::string error_of(const std::string& family, int n, int degree = 0, uint64_t seed = 1) {
  try {
    make_overlay(family, n, degree, seed);
  } catch (const OverlayError& e) {
    return e.what();
  }
  return "no error";
}

long resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = 0;
  while (status >> key)
    if (key == "VmRSS:") return status >> value, value;
  return -1;
}

struct Case {
  std::string family;
  int n, degree;
};

const std::vector<Case> kSmallCases = {
    {"complete", 7, 0}, {"debruijn", 16, 2}, {"debruijn", 27, 3}, {"debruijn", 64, 4}, {"kautz", 12, 2},
    {"kautz", 36, 3},   {"kautz", 48, 2},    {"random", 40, 0},   {"random", 64, 0},   {"group", 21, 0},
    {"group", 32, 0},   {"polytope", 16, 0}, {"polytope", 27, 3}, {"torus", 16, 0},    {"torus", 25, 5},
    {"torus", 64, 4},   {"hypercube", 32, 0}};

}  // namespace

TEST(WorkedExample, DeBruijn2_4) {
  auto o = make_overlay("debruijn", 16, 2, 1);
  EXPECT_EQ(o->degree(), 2);
  EXPECT_EQ(o->digits(), 4);
  EXPECT_EQ(o->out_neighbors(0), (std::vector<int>{0, 8}));
  EXPECT_EQ(route(*o, 0, 1), (std::vector<int>{0, 8, 4, 2, 1}));
  EXPECT_EQ(route(*o, 0, 2), (std::vector<int>{0, 8, 4, 2}));
  EXPECT_EQ(route(*o, 5, 5), (std::vector<int>{5}));
  RouteStats st = route_statistics(*o);
  EXPECT_EQ(st.route_lengths, (std::vector<int64_t>{16, 30, 54, 82, 74}));
  int64_t relays = 0;
  for (int64_t r : st.relays) relays += r;
  EXPECT_DOUBLE_EQ(relays / 16.0, 27.5);
  EXPECT_EQ(st.arcs, 32);  // two self-loops (0 and 15) included
  EXPECT_EQ(st.diameter, 4);
  EXPECT_DOUBLE_EQ(st.mean_hops, (30 + 2 * 54 + 3 * 82 + 4 * 74) / 240.0);
}

TEST(Families, ArcsNextHopsAndShortestRoutesAgree) {
  for (const Case& c : kSmallCases) {
    SCOPED_TRACE(c.family + " " + std::to_string(c.n));
    auto o = make_overlay(c.family, c.n, c.degree, 7);
    const int n = o->size();
    ASSERT_EQ(n, c.n);
    std::set<std::pair<int, int>> arcs, reversed;
    for (int u = 0; u < n; ++u) {
      std::vector<int> out = o->out_neighbors(u), in = o->in_neighbors(u);
      EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
      EXPECT_EQ(std::adjacent_find(out.begin(), out.end()), out.end());
      EXPECT_TRUE(std::is_sorted(in.begin(), in.end()));
      for (int v : out) arcs.insert({u, v});
      for (int v : in) reversed.insert({v, u});
      std::vector<int> list = connection_list(*o, u);
      std::set<int> expected(in.begin(), in.end());
      expected.insert(u);
      EXPECT_EQ(list, std::vector<int>(expected.begin(), expected.end()));
    }
    EXPECT_EQ(arcs, reversed);  // in_neighbors is the transpose of out_neighbors
    EXPECT_EQ(o->label(), overlay_label(c.family, o->degree(), o->digits()));
    auto w = o->fresh();
    for (int d = 0; d < n; ++d) {
      std::vector<int> dist = hops_from_bfs(*o, d);
      for (int s = 0; s < n; ++s) {
        std::vector<int> r = route(*w, s, d);
        for (size_t i = 0; i + 1 < r.size(); ++i) ASSERT_TRUE(arcs.count({r[i], r[i + 1]})) << r[i] << "->" << r[i + 1];
        EXPECT_EQ(static_cast<int>(r.size()) - 1, dist[s]) << s << "->" << d;
      }
    }
  }
}

TEST(Families, StatisticsMatchWalkedRoutes) {
  for (const Case& c : kSmallCases) {
    SCOPED_TRACE(c.family + " " + std::to_string(c.n));
    auto o = make_overlay(c.family, c.n, c.degree, 3);
    RouteStats fast = route_statistics(*o), slow = walked_statistics(*o);
    EXPECT_EQ(fast.route_lengths, slow.route_lengths);
    EXPECT_EQ(fast.relays, slow.relays);
    int64_t arcs = 0;
    for (int u = 0; u < o->size(); ++u) arcs += static_cast<int64_t>(o->out_neighbors(u).size());
    EXPECT_EQ(fast.arcs, arcs);
    EXPECT_EQ(fast.diameter, static_cast<int>(slow.route_lengths.size()) - 1);
  }
}

TEST(DeBruijn, ArcsFollowTheDigitDefinition) {
  const int b = 3, D = 3, n = 27;
  auto o = make_overlay("debruijn", n, b, 1);
  auto digit = [&](int i, int p) { return i / static_cast<int>(std::pow(b, p)) % b; };
  for (int i = 0; i < n; ++i) {
    std::vector<int> expected;
    for (int j = 0; j < n; ++j) {
      bool arc = true;
      for (int p = 1; p < D; ++p) arc = arc && digit(i, p) == digit(j, p - 1);
      if (arc) expected.push_back(j);
    }
    EXPECT_EQ(o->out_neighbors(i), expected) << i;
  }
}

TEST(Kautz, RanksCountWordsInIntegerOrderAndArcsShiftThem) {
  const int d = 3, base = 4;  // D = 3
  auto o = make_overlay("kautz", (d + 1) * d * d, d, 1);
  ASSERT_EQ(o->size(), 36);
  std::vector<int> words;  // rank -> word value, by brute force
  for (int w = 0; w < base * base * base; ++w)
    if (w % 4 != w / 4 % 4 && w / 4 % 4 != w / 16) words.push_back(w);
  ASSERT_EQ(static_cast<int>(words.size()), 36);
  std::map<int, int> rank_of;
  for (int r = 0; r < 36; ++r) rank_of[words[r]] = r;
  for (int r = 0; r < 36; ++r) {
    std::vector<int> expected;
    for (int x = 0; x < base; ++x) {
      int next = words[r] / base + x * base * base;
      if (rank_of.count(next)) expected.push_back(rank_of[next]);
    }
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(o->out_neighbors(r), expected) << r;
  }
}

TEST(Group, RoutesGoThroughTheLeaders) {
  auto o = make_overlay("group", 20, 0, 1);
  EXPECT_EQ(route(*o, 3, 5), (std::vector<int>{3, 5}));
  EXPECT_EQ(route(*o, 3, 13), (std::vector<int>{3, 0, 8, 13}));
  EXPECT_EQ(route(*o, 0, 19), (std::vector<int>{0, 16, 19}));
  EXPECT_EQ(route(*o, 17, 8), (std::vector<int>{17, 16, 8}));
  EXPECT_EQ(o->out_neighbors(8), (std::vector<int>{0, 8, 9, 10, 11, 12, 13, 14, 15, 16}));
  EXPECT_EQ(o->out_neighbors(19), (std::vector<int>{16, 17, 18, 19}));
}

TEST(Polytope, LeastLoadedPositionThenLowestAndFreshResets) {
  auto o = make_overlay("hypercube", 4, 0, 1);  // b=2, L=2
  EXPECT_EQ(o->family(), "polytope");
  EXPECT_EQ(o->next_hop(0, 0, 3), 1);  // loads equal: position 0
  EXPECT_EQ(o->next_hop(0, 0, 3), 2);  // load[0][1] = 1 now: position 1
  EXPECT_EQ(o->next_hop(0, 0, 3), 1);  // equal again
  EXPECT_EQ(o->next_hop(1, 1, 3), 3);  // counters are per rank: rank 1's are untouched
  auto f = o->fresh();
  EXPECT_EQ(f->next_hop(0, 0, 3), 1);
  EXPECT_TRUE(o->has_load_counters());
}

TEST(Torus, MinusStepBeforePlusStepThenLeastLoaded) {
  auto o = make_overlay("torus", 4, 4, 1);  // a ring of 4
  EXPECT_EQ(o->out_neighbors(0), (std::vector<int>{1, 3}));
  EXPECT_EQ(o->next_hop(0, 0, 2), 3);  // both ways are 2 steps: -1 first
  EXPECT_EQ(o->next_hop(0, 0, 2), 1);  // load of symbol 3 is 1 now
  EXPECT_EQ(o->next_hop(0, 0, 1), 1);  // only +1 is shortest
  auto r2 = make_overlay("torus", 8, 0, 1);  // radix 2: -1 and +1 are one neighbour
  EXPECT_EQ(r2->out_neighbors(0), (std::vector<int>{1, 2, 4}));
}

TEST(Random, EdgeCountDeterminismAndSymmetry) {
  auto a = make_overlay("random", 100, 0, 42), b = make_overlay("random", 100, 0, 42);
  auto c = make_overlay("random", 100, 0, 43);
  int64_t arcs = 0;
  bool differs = false;
  for (int u = 0; u < 100; ++u) {
    std::vector<int> out = a->out_neighbors(u);
    arcs += static_cast<int64_t>(out.size());
    EXPECT_EQ(out, a->in_neighbors(u));
    EXPECT_EQ(out, b->out_neighbors(u));
    EXPECT_EQ(std::count(out.begin(), out.end(), u), 0);
    differs = differs || out != c->out_neighbors(u);
    for (int d = 0; d < 100; ++d)
      if (d != u) {
        ASSERT_EQ(a->next_hop(u, u, d), b->next_hop(u, u, d));
      }
  }
  EXPECT_EQ(arcs, 2 * (100 * 6 / 2));  // n*floor(log2 n)/2 undirected edges
  EXPECT_TRUE(differs);
  EXPECT_EQ(a->degree(), 6);
}

TEST(Random, DisconnectedSeedNamesAWorkingSeed) {
  // 5 ranks get 5 of the 10 possible edges: some seeds isolate a rank.
  int tried = 0;
  for (uint64_t seed = 1; seed < 200; ++seed) {
    std::string e = error_of("random", 5, 0, seed);
    if (e == "no error") continue;
    ++tried;
    EXPECT_NE(e.find("random: seed " + std::to_string(seed) + " leaves the 5 ranks disconnected"), std::string::npos) << e;
    EXPECT_NE(e.find("gives a connected graph"), std::string::npos) << e;
  }
  EXPECT_GT(tried, 0);
}

TEST(TableOverlay, UserGraphRoutesAreShortestAndErrorsAreClear) {
  // A directed ring 0->1->...->9->0 with chords i -> i+3.
  std::vector<std::pair<int, int>> arcs;
  for (int i = 0; i < 10; ++i) arcs.push_back({i, (i + 1) % 10}), arcs.push_back({i, (i + 3) % 10});
  arcs.push_back({4, 4});
  auto o = make_table_overlay(10, arcs, 5, "ring");
  EXPECT_EQ(o->family(), "ring");
  EXPECT_EQ(o->out_neighbors(4), (std::vector<int>{4, 5, 7}));
  for (int d = 0; d < 10; ++d) {
    std::vector<int> dist = hops_from_bfs(*o, d);
    for (int s = 0; s < 10; ++s) EXPECT_EQ(static_cast<int>(route(*o, s, d).size()) - 1, dist[s]);
  }
  try {
    make_table_overlay(4, {{0, 1}, {1, 0}, {2, 3}, {3, 2}}, 1);
    FAIL();
  } catch (const OverlayError& e) {
    EXPECT_STREQ(e.what(), "user: rank 2 cannot reach rank 0 (every rank must reach every other)");
  }
  EXPECT_THROW(make_table_overlay(3, {{0, 3}}, 1), OverlayError);
  EXPECT_THROW(make_table_overlay(20000, {}, 1), OverlayError);
}

TEST(TableOverlay, TiesGoToFewerRelaysThenLowerRank) {
  // 0 -> {1, 2} -> 3 -> 0: nothing else relays through 1 or 2, so the tie goes to rank 1.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto o = make_table_overlay(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 0}}, seed);
    EXPECT_EQ(route(*o, 0, 3), (std::vector<int>{0, 1, 3}));
  }
  // Ten ranks reach ten others through rank 10 or 11: the relay counts keep them even,
  // where lowest-rank ties would send everything through 10.
  std::vector<std::pair<int, int>> arcs;
  for (int a = 0; a < 10; ++a)
    for (int m : {10, 11}) arcs.push_back({a, m}), arcs.push_back({m, 12 + a});
  for (int b = 12; b < 22; ++b)
    for (int a = 0; a < 10; ++a) arcs.push_back({b, a});
  RouteStats st = route_statistics(*make_table_overlay(22, arcs, 9));
  EXPECT_GT(st.relays[10], 0);
  EXPECT_NEAR(static_cast<double>(st.relays[11]) / st.relays[10], 1.0, 0.1);
}

TEST(Errors, NameTheNearestSizesAndTheirParameters) {
  EXPECT_EQ(error_of("kautz", 4000), "kautz: 4000 ranks do not fit; nearest sizes 3906 (d=62, D=2) and 4032 (d=63, D=2)");
  // Without a degree, Ray's default 2: 4096 is B(2, 12), 3969 (no power of 2) B(63, 2).
  EXPECT_EQ(error_of("debruijn", 4000), "debruijn: 4000 ranks do not fit; nearest sizes 3969 (b=63, D=2) and 4096 (b=2, D=12)");
  EXPECT_EQ(error_of("debruijn", 3), "debruijn: 3 ranks do not fit; nearest size 4 (b=2, D=2)");
  EXPECT_EQ(error_of("torus", 4000), "torus: 4000 ranks do not fit; nearest sizes 2048 (r=2, D=11) and 4096 (r=2, D=12)");
  EXPECT_EQ(error_of("polytope", 1000),
            "polytope: 1000 ranks do not fit; nearest sizes 512 (b=2, L=9) and 1024 (b=2, L=10); "
            "degrees that fit 1000 ranks: 10");
  EXPECT_EQ(error_of("polytope", 1000, 3), "polytope: degree 3 does not fit 1000 ranks; nearest sizes 729 (b=3, L=6) and "
                                           "2187 (b=3, L=7); degrees that fit 1000 ranks: 10");
  EXPECT_EQ(error_of("random", 3), "random: 3 ranks do not fit (1 edge cannot connect them); nearest sizes 2 and 4");
  EXPECT_EQ(error_of("mesh", 16),
            "unknown overlay family 'mesh'; known: complete, debruijn, kautz, random, group, polytope, hypercube, torus");
  EXPECT_EQ(error_of("complete", 0), "complete: the number of ranks must be positive (got 0)");
  EXPECT_EQ(error_of("debruijn", 16, 1), "debruijn: the degree must be 0 (automatic) or at least 2 (got 1)");
  EXPECT_EQ(error_of("group", 16, 5), "group: the degree is fixed by the family (8 for 16 ranks); leave it at 0");
  EXPECT_NO_THROW(make_overlay("complete", 16, 16, 1));
}

TEST(Shapes, SizesNear4096FromOverlaysMd) {
  struct Want {
    std::string family;
    int n, degree, want_degree, want_digits;
  };
  for (const Want& w : std::vector<Want>{{"debruijn", 4096, 2, 2, 12},
                                         {"debruijn", 4096, 4, 4, 6},
                                         {"debruijn", 4096, 8, 8, 4},
                                         {"debruijn", 4096, 16, 16, 3},
                                         {"debruijn", 4096, 0, 2, 12},  // Ray's default degree 2
                                         {"debruijn", 1024, 0, 2, 10},  // the published 1024-rank run
                                         {"debruijn", 729, 0, 27, 2},   // no power of 2: from 1024, halved
                                         {"debruijn", 4096, 64, 64, 2},
                                         {"kautz", 6144, 2, 2, 12},
                                         {"kautz", 5120, 4, 4, 6},
                                         {"kautz", 4608, 8, 8, 4},
                                         {"kautz", 4352, 16, 16, 3},
                                         {"kautz", 4032, 0, 63, 2},
                                         {"kautz", 12, 0, 3, 2},  // 12 = K(2,3) = K(3,2): the largest d
                                         {"kautz", 12, 2, 2, 3},
                                         {"polytope", 4096, 0, 2, 12},
                                         {"polytope", 4096, 16, 16, 3},
                                         {"torus", 4096, 0, 2, 12},
                                         {"torus", 4096, 8, 8, 4}}) {
    SCOPED_TRACE(w.family + " " + std::to_string(w.n) + " degree " + std::to_string(w.degree));
    OverlayShape s = overlay_shape(w.family, w.n, w.degree);
    EXPECT_EQ(s.ranks, w.n);
    EXPECT_EQ(s.degree, w.want_degree);
    EXPECT_EQ(s.digits, w.want_digits);
    if (w.family != "polytope" && w.family != "torus") {
      auto o = make_overlay(w.family, w.n, w.degree, 1);
      EXPECT_EQ(o->degree(), w.want_degree);
      EXPECT_EQ(o->digits(), w.want_digits);
      // Shift routing: the route length is D minus the overlap, at most D.
      EXPECT_EQ(static_cast<int>(route(*o, 0, w.n - 1).size()) - 1, w.want_digits);
    }
  }
  auto [below, above] = nearest_sizes("kautz", 4096, 0);
  EXPECT_EQ(below.ranks, 4032);
  EXPECT_EQ(below.degree, 63);
  EXPECT_EQ(above.ranks, 4160);  // K(64,2)
}

TEST(Shapes, K63_2ReachesEveryRankInTwoHops) {
  auto o = make_overlay("kautz", 4032, 0, 1);
  RouteStats st = route_statistics(*o);
  EXPECT_EQ(st.diameter, 2);
  EXPECT_EQ(st.route_lengths[1], 4032 * 63);  // every arc but no self-loop
  EXPECT_EQ(st.out_degree_counts.size(), 64u);
  EXPECT_EQ(st.out_degree_counts[63], 4032);
}

TEST(Memory, DeBruijnOf2To20RanksKeepsNoTable) {
  const long before = resident_kib();
  auto o = make_overlay("debruijn", 1 << 20, 2, 1);
  ASSERT_EQ(o->digits(), 20);
  std::vector<int> r = route(*o, 0, (1 << 20) - 1);
  EXPECT_EQ(r.size(), 21u);
  EXPECT_EQ(o->out_neighbors(12345).size(), 2u);
  auto k = make_overlay("kautz", 1025 * 1024, 0, 1);  // K(1024,2)
  EXPECT_EQ(k->degree(), 1024);
  EXPECT_EQ(route(*k, 0, k->size() - 1).size(), 3u);
  EXPECT_LT(resident_kib() - before, 1024);  // well under a MiB
}

TEST(Errors, AnExplicitDegreeThatDoesNotFitIsRefusedNeverReplaced) {
  EXPECT_EQ(error_of("debruijn", 64, 3),
            "debruijn: degree 3 does not fit 64 ranks; nearest sizes 27 (b=3, D=3) and 81 (b=3, D=4); "
            "degrees that fit 64 ranks: 2, 4, 8; degree 0 (RayPlatform's rule) builds b=2, D=6");
  EXPECT_EQ(error_of("kautz", 12, 5),
            "kautz: degree 5 does not fit 12 ranks; nearest size 30 (d=5, D=2); degrees that fit 12 ranks: 2, 3; "
            "degree 0 (RayPlatform's rule) builds d=3, D=2");
  // A degree as large as the ranks: RayPlatform would halve it to a smaller base.
  EXPECT_NE(error_of("debruijn", 16, 16).find("degree 16 does not fit 16 ranks"), std::string::npos);
  EXPECT_EQ(overlay_shape("debruijn", 64, 8).degree, 8);
}

TEST(Complete, ListsNoSelfConnectionButReceivesFromEveryRank) {
  auto o = make_overlay("complete", 5, 0, 1);
  EXPECT_EQ(o->out_neighbors(2), (std::vector<int>{0, 1, 3, 4}));
  EXPECT_EQ(connection_list(*o, 2), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(route_statistics(*o).arcs, 5 * 4);
}

TEST(SharedCounters, OneLoadTableForAllRanksChangesTheRoutes) {
  // Hypercube Q2: with per-rank counters, 0 -> 3 and then 1 -> 3 both start on position 0;
  // with one shared table the second takes the other position.
  auto per_rank = make_overlay("hypercube", 4, 0, 1)->fresh();
  auto shared = make_overlay("hypercube", 4, 0, 1)->fresh_with_shared_counters();
  EXPECT_EQ(per_rank->next_hop(0, 0, 3), 1);
  EXPECT_EQ(shared->next_hop(0, 0, 3), 1);
  EXPECT_EQ(per_rank->next_hop(2, 2, 3), 3);
  EXPECT_EQ(shared->next_hop(2, 2, 3), 3);
  EXPECT_EQ(per_rank->next_hop(0, 0, 3), 2);
  // Rank 2's forward moved the shared load[0][1]: rank 0's first hop to 3 changes.
  auto fresh_shared = make_overlay("hypercube", 4, 0, 1)->fresh_with_shared_counters();
  auto fresh_per_rank = make_overlay("hypercube", 4, 0, 1)->fresh();
  EXPECT_EQ(fresh_shared->next_hop(2, 2, 3), 3);
  EXPECT_EQ(fresh_per_rank->next_hop(2, 2, 3), 3);
  EXPECT_EQ(fresh_shared->next_hop(0, 0, 3), 2);
  EXPECT_EQ(fresh_per_rank->next_hop(0, 0, 3), 1);
  // Route lengths do not depend on the counters; relay events do.
  RouteStats a = route_statistics(*make_overlay("torus", 27, 3, 1), false);
  RouteStats b = route_statistics(*make_overlay("torus", 27, 3, 1), true);
  EXPECT_EQ(a.route_lengths, b.route_lengths);
}

TEST(GlibcRand, SameDrawsAsTheCLibrary) {
  for (unsigned seed : {0u, 1u, 2u, 30752u, 2147483647u, 2147483648u, 4294967295u}) {
    SCOPED_TRACE(seed);
    std::srand(seed);
    hopsim::overlays::GlibcRand mine(seed);
    for (int i = 0; i < 100000; ++i) ASSERT_EQ(mine.rand(), std::rand()) << i;
  }
}

TEST(GlibcRand, ShuffleDrawsAsLibstdcxxRandomShuffle) {
  std::vector<int> theirs(1000), mine(1000);
  std::iota(theirs.begin(), theirs.end(), 0);
  std::iota(mine.begin(), mine.end(), 0);
  hopsim::overlays::GlibcRand rng(0);
  for (unsigned i = 0; i < 4; ++i) {
    std::srand(i * i * i + 2 * i);
    rng.srand(i * i * i + 2 * i);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    std::random_shuffle(theirs.begin(), theirs.end());
#pragma GCC diagnostic pop
    hopsim::overlays::random_shuffle_like_libstdcxx(mine.data(), mine.data() + mine.size(), rng);
  }
  EXPECT_EQ(mine, theirs);
}

TEST(RayRandom, RoutesDependOnTheSourceAndAreShortest) {
  auto o = make_overlay("ray-random", 64, 0, 12345);  // the seed is not used
  EXPECT_EQ(o->family(), "random");
  EXPECT_TRUE(o->routes_depend_on_origin());
  auto again = make_overlay("ray-random", 64, 0, 1);
  int differ = 0;
  for (int d = 0; d < 64; ++d) {
    std::vector<int> dist = hops_from_bfs(*o, d);
    for (int s = 0; s < 64; ++s) {
      std::vector<int> r = route(*o, s, d);
      ASSERT_EQ(r, route(*again, s, d));
      EXPECT_EQ(static_cast<int>(r.size()) - 1, dist[s]);
      // Where the route from s passes through a relay v, v's own route to d may differ.
      for (size_t i = 1; i + 1 < r.size(); ++i) differ += route(*o, r[i], d)[1] != r[i + 1];
    }
  }
  EXPECT_GT(differ, 0);
  int64_t arcs = 0;
  for (int u = 0; u < 64; ++u) arcs += static_cast<int64_t>(o->out_neighbors(u).size());
  EXPECT_EQ(arcs, 2 * (64 * 6 / 2));
  EXPECT_NE(error_of("ray-random", 5000).find("at most 4096"), std::string::npos);
}

// The walk's progress and stop (overlay.hpp, progress.hpp): what hopsim topology's bar
// reads and what Ctrl-C sets.
namespace {

// A one-way ring whose next hops count themselves: the walk's work made visible.
// has_load_counters makes route_statistics walk every pair hop by hop.
class CountingRing : public Overlay {
public:
  CountingRing(int n, std::shared_ptr<std::atomic<int64_t>> hops) : n_(n), hops_(std::move(hops)) {}
  std::string family() const override { return "ring"; }
  int size() const override { return n_; }
  int degree() const override { return 1; }
  int digits() const override { return 1; }
  std::vector<int> out_neighbors(int rank) const override { return {(rank + 1) % n_}; }
  std::vector<int> in_neighbors(int rank) const override { return {(rank + n_ - 1) % n_}; }
  int next_hop(int, int cur, int) override {
    hops_->fetch_add(1, std::memory_order_relaxed);
    return (cur + 1) % n_;
  }
  std::unique_ptr<Overlay> fresh() const override { return std::make_unique<CountingRing>(n_, hops_); }
  bool has_load_counters() const override { return true; }
  std::string label() const override { return "ring"; }

private:
  int n_;
  std::shared_ptr<std::atomic<int64_t>> hops_;
};

}  // namespace

TEST(WalkProgress, TheCounterHoldsTheFractionOfRanksDone) {
  // debruijn walks destination trees, polytope (load counters) every pair: both report.
  for (const char* family : {"debruijn", "polytope"}) {
    SCOPED_TRACE(family);
    auto o = make_overlay(family, 16, 2, 1);
    ProgressCounter progress{-1};
    RouteStats reported = route_statistics(*o, false, &progress);
    EXPECT_EQ(progress.load(), 1000000);  // all 16 ranks: the fraction 1 in millionths
    RouteStats plain = route_statistics(*o);
    EXPECT_EQ(reported.route_lengths, plain.route_lengths);
    EXPECT_EQ(reported.relays, plain.relays);
    // A stop already requested: the walk ends after its first rank, 1/16 = 62500 millionths.
    std::atomic<bool> stop{true};
    EXPECT_THROW(route_statistics(*o, false, &progress, &stop), WalkStopped);
    EXPECT_EQ(progress.load(), 62500);
  }
  auto ring = CountingRing(16, std::make_shared<std::atomic<int64_t>>(0));
  RouteStats st = route_statistics(ring);
  // A one-way ring of 16: every distance 1..15 from each source, 15 * 16 / 2 = 120 hops
  // per source, so 120 * 16 / 240 = 8 hops on average.
  EXPECT_DOUBLE_EQ(st.mean_hops, 8.0);
}

TEST(WalkProgress, PolledTicksRunOnTheCallersThreadAndEndAtOne) {
  auto o = make_overlay("debruijn", 4096, 2, 1);
  std::vector<double> seen;
  std::set<std::thread::id> threads;
  RouteStats polled = route_statistics_polled(*o, false, [&](double fraction) {
    seen.push_back(fraction);
    threads.insert(std::this_thread::get_id());
  });
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), 1.0);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_GE(seen.front(), 0.0);
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
  RouteStats plain = route_statistics(*o);
  EXPECT_EQ(polled.route_lengths, plain.route_lengths);
  EXPECT_EQ(polled.relays, plain.relays);
  EXPECT_EQ(polled.mean_hops, plain.mean_hops);
}

TEST(WalkProgress, ATickThatThrowsStopsTheWorkerAndLeavesWithItsOwnError) {
  // A ring of 1024 walks 1024 * (1023 * 1024 / 2) = 536,346,624 hops in all (seconds);
  // the first tick (50 ms in) throws.
  auto hops = std::make_shared<std::atomic<int64_t>>(0);
  CountingRing ring(1024, hops);
  int ticks = 0;
  EXPECT_THROW(route_statistics_polled(ring, false,
                                       [&](double) {
                                         ++ticks;
                                         throw std::domain_error("interrupted");
                                       }),
               std::domain_error);
  EXPECT_EQ(ticks, 1);
  const int64_t walked = hops->load();
  EXPECT_LT(walked, int64_t{536346624});  // stopped, not run to its end
  // Joined before the error left: nothing walks any more.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(hops->load(), walked);
}
