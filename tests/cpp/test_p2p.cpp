// The point-to-point workloads beside pingpong (docs/workloads.md): osu_bw's window
// stream (bandwidth) and IMB's PingPing and Sendrecv, against closed forms derived by
// hand, on both transports (docs/model.md, "Transports"): nothing here contends for a
// link in a way FIFO and fair sharing would resolve differently.
// Units: us, bytes; 1 Gbit/s = 125 bytes/us.
#include "engine.hpp"
#include "json_fields.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

using namespace hopsim;

namespace {

constexpr double L = 10;   // one-way latency, us
constexpr double R = 125;  // bytes per us

PlatformSpec base(TransportKind transport)
{
  PlatformSpec p;
  p.nodes = 4;
  p.cores = 4;
  p.latency_us = L;
  p.bandwidth_gbps = 1;
  p.intra_latency_us = 0.5;
  p.intra_bandwidth_gbps = 50;
  p.transport = transport;
  return p;
}

WorkloadSpec workload(WorkloadKind kind, int ranks, std::vector<int64_t> sizes)
{
  WorkloadSpec w;
  w.kind = kind;
  w.ranks = ranks;
  w.sizes = std::move(sizes);
  return w;
}

class BothTransports : public ::testing::TestWithParam<TransportKind> {};

}  // namespace

TEST_P(BothTransports, BandwidthWindowSharesOneLinkThenTheAckReturns)
{
  // 64 sends of s leave at once: fair sharing (flow) or back to back (queue), the last
  // byte of the window arrives at L + 64 s / R; rank 1 answers at once with 4 bytes,
  // back at L + 4 / R. A window takes 2 L + (64 s + 4) / R.
  WorkloadSpec w = workload(WorkloadKind::Bandwidth, 2, {1000, 10000});
  w.iterations = 3;
  std::string r = simulate(base(GetParam()), w);
  for (int i = 0; i < 2; i++) {
    double s = static_cast<double>(w.sizes[i]);
    double window = 2 * L + (64 * s + 4) / R;
    EXPECT_NEAR(fields(r, "window_us")[i], window, 1e-6) << r;
    EXPECT_NEAR(fields(r, "bandwidth_mbytes_per_sec")[i], 64 * s / window, 1e-6) << r;
  }
}

TEST_P(BothTransports, BandwidthWindowBoundByTheSendersOverhead)
{
  // o = 100 us per send exceeds s / R = 80 us: every message crosses alone. The k-th
  // leaves at k o and arrives at k o + L + s / R; the last one's pass sends the ack after
  // another o, back after L + 4 / R: a window takes 65 o + 2 L + (s + 4) / R.
  PlatformSpec p = base(GetParam());
  p.send_overhead_us = 100;
  WorkloadSpec w = workload(WorkloadKind::Bandwidth, 2, {10000});
  w.iterations = 2;
  w.window = 64;
  std::string r = simulate(p, w);
  EXPECT_NEAR(fields(r, "window_us")[0], 65 * 100 + 2 * L + (10000 + 4) / R, 1e-6) << r;
  // A window of 1 is a ping-pong with a 4-byte reply: o + L + s / R + o + L + 4 / R.
  w.window = 1;
  r = simulate(p, w);
  EXPECT_NEAR(fields(r, "window_us")[0], 2 * 100 + 2 * L + (10000 + 4) / R, 1e-6) << r;
}

TEST_P(BothTransports, BandwidthUsesOsuBwCountsByDefault)
{
  WorkloadSpec w = workload(WorkloadKind::Bandwidth, 2, {8192, 8193});
  std::string r = simulate(base(GetParam()), w);
  EXPECT_EQ(fields(r, "iterations"), (std::vector<double>{100, 20})) << r;
  EXPECT_EQ(fields(r, "window"), (std::vector<double>{64, 64})) << r;
}

TEST_P(BothTransports, PingPingIsOneWayTimeOnAFullDuplexLink)
{
  // Both ranks send s to each other at once; the two directions do not share, so a
  // repetition is o + L + s / R + r: the send's overhead, the transfer, the receive's.
  PlatformSpec p = base(GetParam());
  p.send_overhead_us = 1;
  p.recv_overhead_us = 2;
  WorkloadSpec w = workload(WorkloadKind::PingPing, 2, {0, 65536});
  w.repetitions = 5;
  std::string r = simulate(p, w);
  for (int i = 0; i < 2; i++) {
    double s = static_cast<double>(w.sizes[i]);
    double t = 1 + L + s / R + 2;
    EXPECT_NEAR(fields(r, "t_us")[i], t, 1e-6) << r;
    EXPECT_NEAR(fields(r, "mbytes_per_sec")[i], s / t, 1e-6) << r;
  }
}

TEST_P(BothTransports, SendrecvChainCarriesOneMessagePerNicDirection)
{
  // 4 ranks on 4 nodes, each sends s to the right and receives from the left: every NIC
  // direction carries one message per repetition, L + s / R; IMB counts 2 s per rank.
  WorkloadSpec w = workload(WorkloadKind::SendRecv, 4, {65536});
  w.repetitions = 7;
  std::string r = simulate(base(GetParam()), w);
  double t = L + 65536 / R;
  EXPECT_NEAR(fields(r, "t_min_us")[0], t, 1e-6) << r;
  EXPECT_NEAR(fields(r, "t_max_us")[0], t, 1e-6) << r;
  EXPECT_NEAR(fields(r, "t_avg_us")[0], t, 1e-6) << r;
  EXPECT_NEAR(fields(r, "mbytes_per_sec")[0], 2 * 65536 / t, 1e-6) << r;
  // Two ranks per node: 0->1 and 2->3 stay inside a node, 1->2 and 3->0 cross, one per
  // NIC direction; every rank sends or receives one crossing message: L + s / R still.
  w.ranks_per_node = 2;
  r = simulate(base(GetParam()), w);
  EXPECT_NEAR(fields(r, "t_min_us")[0], t, 1e-6) << r;
  EXPECT_NEAR(fields(r, "t_max_us")[0], t, 1e-6) << r;
}

TEST_P(BothTransports, SendrecvOnTwoRanksIsPingPing)
{
  // With 2 ranks the right and the left neighbour are the same rank.
  WorkloadSpec w = workload(WorkloadKind::SendRecv, 2, {4096});
  w.repetitions = 4;
  std::string sendrecv = simulate(base(GetParam()), w);
  w.kind = WorkloadKind::PingPing;
  std::string pingping = simulate(base(GetParam()), w);
  EXPECT_NEAR(fields(sendrecv, "t_max_us")[0], fields(pingping, "t_us")[0], 1e-9);
  EXPECT_NEAR(fields(sendrecv, "mbytes_per_sec")[0], 2 * fields(pingping, "mbytes_per_sec")[0], 1e-9);
}

TEST(P2P, TwoRankWorkloadsRefuseOtherRankCounts)
{
  for (WorkloadKind kind : {WorkloadKind::Bandwidth, WorkloadKind::PingPing}) {
    WorkloadSpec w = workload(kind, 4, {1});
    EXPECT_THROW(simulate(base(TransportKind::Flow), w), std::invalid_argument);
  }
  WorkloadSpec w = workload(WorkloadKind::Bandwidth, 2, {1});
  w.window = 0;
  EXPECT_THROW(simulate(base(TransportKind::Flow), w), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Transports, BothTransports, ::testing::Values(TransportKind::Flow, TransportKind::Queue),
                         [](const auto& info) { return info.param == TransportKind::Flow ? "flow" : "queue"; });

TEST_P(BothTransports, BandwidthRendezvousHandshakesTheWholeWindowAtOnce)
{
  // Above the eager threshold each message asks to send (empty, L) and waits to be
  // cleared (empty, L). osu_bw's receiver has posted all its receives: the 4 requests
  // arrive at L and are cleared at once, the 4 transfers leave at 2 L and share the
  // link (or queue on it) until 3 L + 4 S; the ack is back at 4 L + 4 S + 4 / R. Taken
  // one by one, each message would add its own 2 L handshake.
  PlatformSpec p = base(GetParam());
  p.eager_threshold_bytes = 1000;
  WorkloadSpec w = workload(WorkloadKind::Bandwidth, 2, {10000});
  w.iterations = 3;
  w.window = 4;
  std::string r = simulate(p, w);
  EXPECT_NEAR(fields(r, "window_us")[0], 4 * L + 4 * 10000 / R + 4 / R, 1e-6) << r;
}
