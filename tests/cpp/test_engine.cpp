// The engine's analytic contract, checked in C++ (the same checks run from Python too).
#include "engine.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

using namespace hopsim;

namespace {

PlatformSpec two_nodes()
{
  PlatformSpec p;
  p.nodes = 4;
  p.cores = 2;
  p.latency_us = 10;
  p.bandwidth_gbps = 1;
  p.intra_latency_us = 0.5;
  p.intra_bandwidth_gbps = 50;
  return p;
}

// The n-th number following "key": in the engine's JSON.
double field(const std::string& json, const std::string& key, int nth = 0)
{
  std::regex re("\"" + key + "\":(-?[0-9.eE+-]+)");
  auto it = std::sregex_iterator(json.begin(), json.end(), re);
  for (int i = 0; i < nth; i++)
    ++it;
  if (it == std::sregex_iterator())
    throw std::runtime_error("no field " + key);
  return std::stod((*it)[1]);
}

}  // namespace

TEST(Engine, PingPongIsLatencyPlusSizeOverBandwidth)
{
  WorkloadSpec w;
  w.kind = WorkloadKind::PingPong;
  w.ranks = 2;
  w.sizes = {0, 1, 4096, 1 << 20};
  w.iterations = 5;
  std::string r = simulate(two_nodes(), w);
  for (int i = 0; i < 4; i++) {
    double bytes = static_cast<double>(w.sizes[i]);
    EXPECT_NEAR(field(r, "latency_us", i), 10 + bytes * 8 / 1000, 1e-9) << r;
  }
}

TEST(Engine, IntraNodePingPongTakesTheIntraNodePath)
{
  WorkloadSpec w;
  w.kind = WorkloadKind::PingPong;
  w.ranks = 2;
  w.ranks_per_node = 2;
  w.sizes = {50000};
  w.iterations = 3;
  std::string r = simulate(two_nodes(), w);
  EXPECT_NEAR(field(r, "latency_us"), 0.5 + 50000 * 8 / 50000.0, 1e-9) << r;
}

TEST(Engine, ExchangeOnFourNodesMatchesClosedForm)
{
  WorkloadSpec w;
  w.kind = WorkloadKind::Exchange;
  w.ranks = 4;
  w.sizes = {65536};
  w.repetitions = 7;
  PlatformSpec p = two_nodes();
  p.latency_us = 20;
  std::string r = simulate(p, w);
  // Two sends share each NIC direction: L + 2 s / B per repetition.
  double expect = 20 + 2 * 65536 * 8 / 1000.0;
  EXPECT_NEAR(field(r, "t_min_us"), expect, 1e-9);
  EXPECT_NEAR(field(r, "t_max_us"), expect, 1e-9);
  EXPECT_NEAR(field(r, "mbytes_per_sec"), 4 * 65536 / expect, 1e-9);
}

TEST(Engine, PassCostDelaysPickupToThePassGrid)
{
  WorkloadSpec w;
  w.kind = WorkloadKind::PingPong;
  w.ranks = 2;
  w.sizes = {0};
  w.iterations = 1;
  PlatformSpec p = two_nodes();
  p.pass_us = 3;
  p.send_overhead_us = 1;
  p.recv_overhead_us = 2;
  std::string r = simulate(p, w);
  // Rank 0: pass at 0 ends at 3 (timing starts), ping injected at 3+o_s = 4, arrives 14.
  // Rank 1 idles on its 3 us pass grid: first pass at or after 14 is 15; it ends at
  // 15+3+o_r = 20 and the pong leaves at 21, arriving 31. Rank 0's grid from 4 has a
  // pass at 31, which ends at 31+3+2 = 36. Half the round trip: (36 - 3) / 2.
  EXPECT_NEAR(field(r, "latency_us"), 16.5, 1e-9) << r;
}

TEST(Engine, SeedDeterminism)
{
  WorkloadSpec w;
  w.kind = WorkloadKind::RoundTrip;
  w.ranks = 4;
  w.exchanges = 50;
  w.seed = 7;
  std::string a = simulate(two_nodes(), w);
  std::string b = simulate(two_nodes(), w);
  auto strip = [](std::string s) { return s.substr(0, s.find("\"peak_rss_kib\"")); };
  EXPECT_EQ(strip(a), strip(b));
  w.seed = 8;
  EXPECT_NE(strip(a), strip(simulate(two_nodes(), w)));
}

TEST(Engine, RejectsMoreRanksThanCores)
{
  WorkloadSpec w;
  w.ranks = 6;
  w.ranks_per_node = 3;
  EXPECT_THROW(simulate(two_nodes(), w), std::invalid_argument);
}

// The child's progress reaches the parent through the shared page: every tick is a
// fraction in [0, 1], they never go back for a round-trip run, and the last is exactly 1
// (the child's final store). A page that were not shared would leave every tick at 0.
TEST(Engine, ProgressTicksRiseToOneThroughTheSharedPage)
{
  WorkloadSpec w;
  w.kind = WorkloadKind::RoundTrip;
  w.ranks = 64;
  w.exchanges = 300;
  PlatformSpec p = two_nodes();
  p.nodes = 64;
  std::vector<double> ticks;
  std::string r = simulate(p, w, [&](double f) { ticks.push_back(f); });
  ASSERT_FALSE(ticks.empty());
  EXPECT_EQ(ticks.back(), 1.0);
  for (size_t i = 0; i < ticks.size(); i++) {
    EXPECT_GE(ticks[i], 0.0);
    EXPECT_LE(ticks[i], 1.0);
    if (i > 0)
      EXPECT_GE(ticks[i], ticks[i - 1]);
  }
}

// A tick that throws abandons the run: the exception leaves simulate() as it was thrown.
TEST(Engine, AThrowingTickAbandonsTheRun)
{
  WorkloadSpec w;
  w.kind = WorkloadKind::RoundTrip;
  w.ranks = 64;
  w.exchanges = 2000;
  PlatformSpec p = two_nodes();
  p.nodes = 64;
  struct Stop {};
  EXPECT_THROW(simulate(p, w, [](double) { throw Stop{}; }), Stop);
}
