// The two transports (docs/model.md, "Transports"): the queue transport gives the flow
// model's results wherever nothing contends (every closed form of test_engine.cpp and
// test_model.cpp that has no contention, run here on both), the FIFO closed forms where
// something does, and byte-identical results for the same seed.
// Units: us, bytes; 1 Gbit/s = 125 bytes/us, 50 Gbit/s = 6250 bytes/us.
#include "engine.hpp"
#include "json_fields.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <regex>
#include <string>

using namespace hopsim;

namespace {

PlatformSpec base()
{
  PlatformSpec p;
  p.nodes = 4;
  p.cores = 4;
  p.latency_us = 10;
  p.bandwidth_gbps = 1;
  p.intra_latency_us = 0.5;
  p.intra_bandwidth_gbps = 50;
  return p;
}

WorkloadSpec pingpong(std::vector<int64_t> sizes, int64_t iterations, int ranks_per_node = 1)
{
  WorkloadSpec w;
  w.kind = WorkloadKind::PingPong;
  w.ranks = 2;
  w.ranks_per_node = ranks_per_node;
  w.sizes = std::move(sizes);
  w.iterations = iterations;
  return w;
}

WorkloadSpec exchange(int ranks, int ranks_per_node, int64_t bytes, int64_t repetitions)
{
  WorkloadSpec w;
  w.kind = WorkloadKind::Exchange;
  w.ranks = ranks;
  w.ranks_per_node = ranks_per_node;
  w.sizes = {bytes};
  w.repetitions = repetitions;
  return w;
}

std::string run(PlatformSpec p, const WorkloadSpec& w, TransportKind t)
{
  p.transport = t;
  std::string r = simulate(p, w);
  return r.substr(0, r.find("\"peak_rss_kib\""));
}

// The same JSON up to rounding: the same text outside numbers, numbers within 1e-9
// relative (SimGrid's solver and the queue's arithmetic round differently).
void expect_same_results(const std::string& flow, const std::string& queue)
{
  std::regex number("-?[0-9]+(\\.[0-9]+)?([eE][+-]?[0-9]+)?");
  EXPECT_EQ(std::regex_replace(flow, number, "#"), std::regex_replace(queue, number, "#")) << flow << "\n" << queue;
  std::vector<double> a, b;
  for (auto it = std::sregex_iterator(flow.begin(), flow.end(), number); it != std::sregex_iterator(); ++it)
    a.push_back(std::stod(it->str()));
  for (auto it = std::sregex_iterator(queue.begin(), queue.end(), number); it != std::sregex_iterator(); ++it)
    b.push_back(std::stod(it->str()));
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); i++)
    EXPECT_NEAR(a[i], b[i], 1e-9 * std::max(1.0, std::fabs(a[i]))) << i << "\n" << flow << "\n" << queue;
}

void expect_agreement(const PlatformSpec& p, const WorkloadSpec& w)
{
  expect_same_results(run(p, w, TransportKind::Flow), run(p, w, TransportKind::Queue));
}

}  // namespace

// ---- No contention: the queue transport is the flow model -----------------------------

TEST(QueueAgreesWithFlow, PingPongBetweenNodesAndInsideANode)
{
  expect_agreement(base(), pingpong({0, 1, 4096, 1 << 20}, 5));
  expect_agreement(base(), pingpong({50000}, 3, 2));
}

TEST(QueueAgreesWithFlow, HostCostsAndPollingPasses)
{
  PlatformSpec p = base();
  p.pass_us = 3;
  p.send_overhead_us = 1;
  p.recv_overhead_us = 2;
  p.per_byte_overhead_ns = 0.5;
  p.gap_us = 4;
  expect_agreement(p, pingpong({0, 1000}, 7));
  p.reception = Reception::RoundRobin;
  expect_agreement(p, pingpong({0, 1000}, 7));
}

TEST(QueueAgreesWithFlow, EveryMechanismOfTheNicStage)
{
  PlatformSpec p = base();
  p.bucket_gbps = 0.2;
  p.bucket_burst_bytes = 4000;
  expect_agreement(p, pingpong({10000}, 4));
  p.bucket_burst_bytes = 0;
  expect_agreement(p, exchange(2, 1, 10000, 3));
  p = base();
  p.nic_message_us = 5;
  expect_agreement(p, pingpong({0, 1000}, 3));
  expect_agreement(p, pingpong({6250}, 3, 2));
  p = base();
  p.noise_scope = NoiseScope::Message;
  p.noise_median_us = 10;
  p.noise_sigma = 0.5;
  expect_agreement(p, pingpong({0, 1000}, 200));
  p.noise_scope = NoiseScope::Run;
  expect_agreement(p, pingpong({0, 1000}, 3));
}

TEST(QueueAgreesWithFlow, ProtocolsAndProbeModes)
{
  PlatformSpec p = base();
  p.eager_threshold_bytes = 1000;
  expect_agreement(p, pingpong({0, 1000, 4096}, 3));
  for (Probe probe : {Probe::Header, Probe::Post}) {
    p = base();
    p.pass_us = 3;
    p.probe = probe;
    expect_agreement(p, pingpong({1250}, 1));
    expect_agreement(p, pingpong({4096}, 3, 2));
  }
  p = base();
  p.cores = 1;
  p.oversubscribe = true;
  p.pass_us = 3;
  p.send_overhead_us = 1;
  p.recv_overhead_us = 2;
  expect_agreement(p, pingpong({0}, 1, 2));
}

TEST(QueueAgreesWithFlow, ExchangeOnFourSingleRankNodes)
{
  // Both sends of a rank leave one NIC: fair sharing ends both at L + 2s/R, FIFO the
  // first at L + s/R and the second at L + 2s/R; each rank waits for its last message,
  // which arrives at L + 2s/R in both. Under every probe mode.
  for (Probe probe : {Probe::Arrival, Probe::Header, Probe::Post}) {
    PlatformSpec p = base();
    p.latency_us = 20;
    p.probe = probe;
    std::string q = run(p, exchange(4, 1, 65536, 7), TransportKind::Queue);
    EXPECT_NEAR(fields(q, "t_max_us")[0], 20 + 2 * 65536 / 125.0, 1e-9) << q;
    EXPECT_NEAR(fields(q, "t_min_us")[0], 20 + 2 * 65536 / 125.0, 1e-9) << q;
    expect_agreement(p, exchange(4, 1, 65536, 7));
  }
}

TEST(QueueAgreesWithFlow, RoundTripsWithoutContentionOrTies)
{
  // Empty messages occupy no link; on 2 and 4 single-rank nodes no two of them reach a
  // rank at the same date, so the order of receptions is the same in both (where two do,
  // the flow model breaks the tie in SimGrid's order of completions and the queue in
  // order of delivery: both valid, not always the same; docs/model.md).
  PlatformSpec p = base();
  p.pass_us = 1;
  p.send_overhead_us = 0.5;
  WorkloadSpec w;
  w.kind = WorkloadKind::RoundTrip;
  w.request_bytes = 0;
  w.reply_bytes = 0;
  w.ranks = 2;
  w.exchanges = 5;
  expect_agreement(p, w);
  w.ranks = 4;
  w.exchanges = 3;
  expect_agreement(p, w);
  p.pass_us = 0;
  p.send_overhead_us = 0;
  expect_agreement(p, w);
}

// ---- Contention: FIFO, not fair sharing --------------------------------------------------

TEST(QueueUnderContention, EightMessagesOnOneIntraNodeLinkLeaveOneAtATime)
{
  // IMB Exchange on four ranks of one node: eight 1000-byte messages posted at t = 0 on
  // the node's link (0.5 us, 6250 bytes/us), in IMB's posting order (right, then left)
  // 0->1, 0->3, 1->2, 1->0, 2->3, 2->1, 3->0, 3->2; the k-th ends at 0.5 + 0.16 k. A rank
  // is done with its last message in or out: rank 0 at k = 7 (3->0), rank 1 at 6 (2->1),
  // rank 2 at 8 (3->2), rank 3 at 8 (its send 3->2). Fair sharing ends all eight at
  // 0.5 + 8 * 0.16 = 1.78.
  PlatformSpec p = base();
  std::string q = run(p, exchange(4, 4, 1000, 1), TransportKind::Queue);
  EXPECT_NEAR(fields(q, "t_max_us")[0], 0.5 + 8 * 0.16, 1e-9) << q;
  EXPECT_NEAR(fields(q, "t_min_us")[0], 0.5 + 6 * 0.16, 1e-9) << q;
  EXPECT_NEAR(fields(q, "t_avg_us")[0], 0.5 + (7 + 6 + 8 + 8) / 4.0 * 0.16, 1e-9) << q;
  std::string f = run(p, exchange(4, 4, 1000, 1), TransportKind::Flow);
  EXPECT_NEAR(fields(f, "t_min_us")[0], 0.5 + 8 * 0.16, 1e-9) << f;
  EXPECT_NEAR(fields(f, "t_max_us")[0], 0.5 + 8 * 0.16, 1e-9) << f;
}

TEST(QueueUnderContention, ABackboneSerialisesEveryNodeToNodeMessage)
{
  // Two ping-pong pairs would share a 1 Gbit/s backbone; with one pair it is a third
  // link in the route: cut through, an isolated message still takes L + s/R.
  PlatformSpec p = base();
  p.backbone_gbps = 1;
  expect_agreement(p, pingpong({0, 4096}, 3));
  // A backbone slower than the NICs is the bottleneck: L + s/Rb (Rb = 62.5 bytes/us).
  p.backbone_gbps = 0.5;
  std::string q = run(p, pingpong({4096}, 3), TransportKind::Queue);
  EXPECT_NEAR(fields(q, "latency_us")[0], 10 + 4096 / 62.5, 1e-9) << q;
  expect_agreement(p, pingpong({4096}, 3));
}

TEST(Limiter, BindsOneDirectionAtItsRateWhenSlowerThanTheNic)
{
  // An isolated message crosses the sender's and the receiver's limiter: L + s/min(R, D).
  PlatformSpec p = base();
  p.limiter_gbps = 0.5;  // D = 62.5 bytes/us under R = 125
  for (TransportKind t : {TransportKind::Flow, TransportKind::Queue}) {
    std::string r = run(p, pingpong({4096}, 3), t);
    EXPECT_NEAR(fields(r, "latency_us")[0], 10 + 4096 / 62.5, 1e-9) << r;
  }
  p.limiter_gbps = 2;  // faster than the NIC: the NIC binds, L + s/R
  for (TransportKind t : {TransportKind::Flow, TransportKind::Queue}) {
    std::string r = run(p, pingpong({4096}, 3), t);
    EXPECT_NEAR(fields(r, "latency_us")[0], 10 + 4096 / 125.0, 1e-9) << r;
  }
  // Inside a node nothing crosses the limiter.
  p.limiter_gbps = 0.001;
  expect_agreement(p, pingpong({50000}, 3, 2));
  std::string r = run(p, pingpong({50000}, 3, 2), TransportKind::Queue);
  EXPECT_NEAR(fields(r, "latency_us")[0], 0.5 + 50000 / 6250.0, 1e-9) << r;
}

TEST(Limiter, SharesANodesTwoDirections)
{
  // IMB Exchange on 2 single-rank nodes (docs/model.md, "Per-node limiter"): each rank
  // sends s twice to the other and receives s twice; 4 transfers cross each limiter.
  // R = 125, D = 187.5 bytes/us, L = 20, s = 65536.
  PlatformSpec p = base();
  p.nodes = 2;
  p.latency_us = 20;
  p.limiter_gbps = 1.5;
  // Flow: max-min, every transfer at min(R/2, D/4) = 46.875: L + 4s/D.
  std::string f = run(p, exchange(2, 1, 65536, 1), TransportKind::Flow);
  EXPECT_NEAR(fields(f, "t_max_us")[0], 20 + 4 * 65536 / 187.5, 1e-6) << f;
  EXPECT_NEAR(fields(f, "t_min_us")[0], 20 + 4 * 65536 / 187.5, 1e-6) << f;
  // Queue: each limiter serves s/D four times back to back from 0 (its own first send,
  // the peer's first message from s/D, its second send from 2s/D, the peer's second
  // message from 3s/D): the last byte passes at 4s/D.
  std::string q = run(p, exchange(2, 1, 65536, 1), TransportKind::Queue);
  EXPECT_NEAR(fields(q, "t_max_us")[0], 4 * 65536 / 187.5, 1e-6) << q;
  EXPECT_NEAR(fields(q, "t_min_us")[0], 4 * 65536 / 187.5, 1e-6) << q;
  // Without it: L + 2s/R, both.
  p.limiter_gbps = 0;
  EXPECT_NEAR(fields(run(p, exchange(2, 1, 65536, 1), TransportKind::Flow), "t_max_us")[0],
              20 + 2 * 65536 / 125.0, 1e-6);
}

TEST(Limiter, ScalesWithTheNodeNotTheMachineUnlikeTheBackbone)
{
  // IMB Exchange on 4 single-rank nodes, flow: each node sends 2s and receives 2s, so
  // 4 transfers cross each limiter: L + 4s/D, as on 2 nodes. A backbone of the same
  // rate carries all 8 transfers: L + 8s/Rb.
  PlatformSpec p = base();
  p.latency_us = 20;
  p.limiter_gbps = 1.5;
  std::string f = run(p, exchange(4, 1, 65536, 1), TransportKind::Flow);
  EXPECT_NEAR(fields(f, "t_max_us")[0], 20 + 4 * 65536 / 187.5, 1e-6) << f;
  p.limiter_gbps = 0;
  p.backbone_gbps = 1.5;
  f = run(p, exchange(4, 1, 65536, 1), TransportKind::Flow);
  EXPECT_NEAR(fields(f, "t_max_us")[0], 20 + 8 * 65536 / 187.5, 1e-6) << f;
}

TEST(Limiter, ScopeRendezvousBindsOnlyMessagesAboveTheEagerThreshold)
{
  // limiter_scope rendezvous: a message up to the eager threshold passes the limiter by,
  // L + s/R; one above it crosses it, its request and answer first (one latency each,
  // no bytes): 3L + s/min(R, D). R = 125, D = 62.5 bytes/us, L = 10.
  PlatformSpec p = base();
  p.limiter_gbps = 0.5;
  p.eager_threshold_bytes = 8192;
  p.limiter_scope = LimiterScope::Rendezvous;
  for (TransportKind t : {TransportKind::Flow, TransportKind::Queue}) {
    std::vector<double> lat = fields(run(p, pingpong({4096, 65536}, 3), t), "latency_us");
    EXPECT_NEAR(lat[0], 10 + 4096 / 125.0, 1e-9);
    EXPECT_NEAR(lat[1], 3 * 10 + 65536 / 62.5, 1e-6);
  }
  // Scope all: the eager message crosses it too.
  p.limiter_scope = LimiterScope::All;
  for (TransportKind t : {TransportKind::Flow, TransportKind::Queue})
    EXPECT_NEAR(fields(run(p, pingpong({4096}, 3), t), "latency_us")[0], 10 + 4096 / 62.5, 1e-9);
  // Both transports agree with a first fragment sent with the request, and on 2 ranks
  // per node, where on-node rendezvous messages never cross it.
  p.limiter_scope = LimiterScope::Rendezvous;
  p.rendezvous_first_bytes = 4096;
  expect_agreement(p, pingpong({4096, 65536}, 3));
  expect_agreement(p, pingpong({65536}, 3, 2));
}

TEST(Backbone, ScopeRendezvousCarriesOnlyMessagesAboveTheEagerThreshold)
{
  // backbone_scope rendezvous, a backbone of Rb = 62.5 bytes/us under R = 125, L = 10:
  // an eager message goes NIC to NIC, L + s/R; a rendezvous crosses the backbone after
  // its request and answer, 3L + s/Rb (the limiter's scope test, machine-wide).
  PlatformSpec p = base();
  p.backbone_gbps = 0.5;
  p.eager_threshold_bytes = 8192;
  p.backbone_scope = LimiterScope::Rendezvous;
  for (TransportKind t : {TransportKind::Flow, TransportKind::Queue}) {
    std::vector<double> lat = fields(run(p, pingpong({4096, 65536}, 3), t), "latency_us");
    EXPECT_NEAR(lat[0], 10 + 4096 / 125.0, 1e-9);
    EXPECT_NEAR(lat[1], 3 * 10 + 65536 / 62.5, 1e-6);
  }
  p.backbone_scope = LimiterScope::All;
  for (TransportKind t : {TransportKind::Flow, TransportKind::Queue})
    EXPECT_NEAR(fields(run(p, pingpong({4096}, 3), t), "latency_us")[0], 10 + 4096 / 62.5, 1e-9);
  p.backbone_scope = LimiterScope::Rendezvous;
  p.rendezvous_first_bytes = 4096;
  expect_agreement(p, pingpong({4096, 65536}, 3));
}

TEST(Backbone, ScopeRendezvousSharesTheMachineAmongRendezvousTransfersOnly)
{
  // IMB Exchange on 4 single-rank nodes, flow. Above the eager threshold every transfer
  // crosses the backbone whatever its scope (8 of them share it: slower than on 2 nodes,
  // where 4 do); at or below it, the rendezvous scope leaves the exchange as without one.
  PlatformSpec p = base();
  p.latency_us = 20;
  p.eager_threshold_bytes = 8192;
  p.backbone_gbps = 1.5;
  auto t_max = [&](LimiterScope scope, int ranks, int64_t s) {
    p.backbone_scope = scope;
    return fields(run(p, exchange(ranks, 1, s, 1), TransportKind::Flow), "t_max_us")[0];
  };
  EXPECT_NEAR(t_max(LimiterScope::Rendezvous, 4, 65536), t_max(LimiterScope::All, 4, 65536), 1e-6);
  EXPECT_GT(t_max(LimiterScope::Rendezvous, 4, 65536), 1.5 * t_max(LimiterScope::Rendezvous, 2, 65536));
  double shared_eager = t_max(LimiterScope::All, 4, 8192);
  double scoped_eager = t_max(LimiterScope::Rendezvous, 4, 8192);
  p.backbone_gbps = 0;
  double none = t_max(LimiterScope::All, 4, 8192);
  EXPECT_NEAR(scoped_eager, none, 1e-9);
  EXPECT_GT(shared_eager, none + 1);
}

TEST(Limiter, ServesABucketsBytesAsTheyLeaveIt)
{
  // R = 125, r = 25, b = 4000, D = 62.5 bytes/us, L = 10 (test_model.cpp's
  // MessageLargerThanTheBurstFinishesAtTheSustainedRate with a limiter between r and R):
  // the bytes leave the bucket over 240 us, at r on average, below D: the limiter adds
  // nothing, 10 + 40 + 200 = 250 us (served after the bucket, it would add s/D - s/R).
  PlatformSpec p = base();
  p.bucket_gbps = 0.2;
  p.bucket_burst_bytes = 4000;
  p.limiter_gbps = 0.5;
  for (TransportKind t : {TransportKind::Flow, TransportKind::Queue})
    EXPECT_NEAR(fields(run(p, pingpong({10000}, 4), t), "latency_us")[0], 250, 1e-6);
  // A limiter below the bucket's pace binds: L + s/D from the first byte, 10 + 10000/12.5.
  p.limiter_gbps = 0.1;
  for (TransportKind t : {TransportKind::Flow, TransportKind::Queue})
    EXPECT_NEAR(fields(run(p, pingpong({10000}, 4), t), "latency_us")[0], 10 + 10000 / 12.5, 1e-6);
  // A backbone at the same rates alike: on 2 nodes the two forms carry the same bytes.
  p.limiter_gbps = 0;
  p.backbone_gbps = 0.5;
  for (TransportKind t : {TransportKind::Flow, TransportKind::Queue})
    EXPECT_NEAR(fields(run(p, pingpong({10000}, 4), t), "latency_us")[0], 250, 1e-6);
}

TEST(Limiter, RunsOnTheStarOnly)
{
  PlatformSpec p = base();
  p.topology = "torus";
  p.topology_parameters = "2,2";
  p.limiter_gbps = 1;
  EXPECT_THROW(simulate(p, pingpong({0}, 1)), std::invalid_argument);
}

TEST(QueueUnderContention, ContendedRoundTripsAreDeterministic)
{
  PlatformSpec p = base();
  p.nodes = 16;
  WorkloadSpec w;
  w.kind = WorkloadKind::RoundTrip;
  w.ranks = 64;
  w.ranks_per_node = 4;
  w.exchanges = 20;
  std::string a = run(p, w, TransportKind::Queue);
  EXPECT_EQ(a, run(p, w, TransportKind::Queue));
  w.seed = 2;
  EXPECT_NE(a, run(p, w, TransportKind::Queue));
}

TEST(QueueTransport, RunsOnTheStarOnly)
{
  PlatformSpec p = base();
  p.topology = "torus";
  p.topology_parameters = "2,2";
  p.transport = TransportKind::Queue;
  EXPECT_THROW(simulate(p, pingpong({0}, 1)), std::invalid_argument);
}
