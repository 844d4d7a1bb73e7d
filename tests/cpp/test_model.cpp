// The model mechanisms of docs/model.md, each alone and in combination, against closed
// forms derived by hand in the comments. Units: us, bytes; 1 Gbit/s = 125 bytes/us.
#include "engine.hpp"
#include "json_fields.hpp"
#include "message.hpp"
#include "rank_loop.hpp"
#include "workloads.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <string>

using namespace hopsim;

namespace {

PlatformSpec base()
{
  PlatformSpec p;
  p.nodes = 2;
  p.cores = 4;
  p.latency_us = 10;
  p.bandwidth_gbps = 1;  // R = 125 bytes/us
  p.intra_latency_us = 0.5;
  p.intra_bandwidth_gbps = 50;  // 6250 bytes/us
  return p;
}

std::string pingpong(const PlatformSpec& p, std::vector<int64_t> sizes, int64_t iterations, int ranks_per_node = 1,
                     int64_t warmup = -1)
{
  WorkloadSpec w;
  w.kind = WorkloadKind::PingPong;
  w.ranks = 2;
  w.ranks_per_node = ranks_per_node;
  w.sizes = std::move(sizes);
  w.iterations = iterations;
  w.warmup = warmup;
  return simulate(p, w);
}

WorkloadSpec exchange_spec(int ranks, int ranks_per_node, int64_t bytes, int64_t repetitions)
{
  WorkloadSpec w;
  w.kind = WorkloadKind::Exchange;
  w.ranks = ranks;
  w.ranks_per_node = ranks_per_node;
  w.sizes = {bytes};
  w.repetitions = repetitions;
  return w;
}

std::string exchange(const PlatformSpec& p, int ranks, int ranks_per_node, int64_t bytes, int64_t repetitions)
{
  return simulate(p, exchange_spec(ranks, ranks_per_node, bytes, repetitions));
}

// Every repetition of a 2-rank exchange (one rank per node) of `bytes` takes `us`.
void expect_every_exchange_takes(const PlatformSpec& p, int64_t bytes, double us)
{
  std::string r = exchange(p, 2, 1, bytes, 3);
  EXPECT_NEAR(fields(r, "t_min_us")[0], us, 1e-9) << r;
  EXPECT_NEAR(fields(r, "t_max_us")[0], us, 1e-9) << r;
}

std::string strip_rss(const std::string& s) { return s.substr(0, s.find("\"peak_rss_kib\"")); }

}  // namespace

// ---- Token bucket ---------------------------------------------------------------------
// R = 125 bytes/us (the NIC), r = 0.2 Gbit/s = 25 bytes/us, depth b. At R the bucket
// drains at R - r = 100 bytes/us, so it lets R*b/(R - r) = 1.25 b bytes through at line
// rate; the rest leaves at r. The receiving node's bucket sees the bytes arrive already
// paced by the sender's and adds nothing when it is as full.

TEST(TokenBucket, IsolatedMessageRidesTheBurst)
{
  PlatformSpec p = base();
  p.bucket_gbps = 0.2;
  p.bucket_burst_bytes = 100000;
  // s = 10000 <= 1.25 b: at line rate, L + s/R = 10 + 80 = 90. Each message takes
  // s(1 - r/R) = 8000 tokens and a round trip (180 us) returns 4500: after 5 round trips
  // 100000 - 5 * 3500 tokens remain, still far above s/1.25 = 8000.
  std::string r = pingpong(p, {10000}, 5);
  EXPECT_NEAR(fields(r, "latency_us")[0], 90, 1e-9) << r;
}

TEST(TokenBucket, WarmupRoundTripsDrainTheBucketBeforeTheTimedOnes)
{
  // OSU's -x: untimed round trips first. b = 12000: one 10000-byte message rides the
  // burst (90 us, 8000 tokens), but each round trip returns 25 * 180 = 4500 of them: the
  // bucket falls until messages leave partly at r. With no warm-up the one timed round
  // trip starts on a full bucket (90 us, as above); after 20 warm-ups it does not.
  PlatformSpec p = base();
  p.bucket_gbps = 0.2;
  p.bucket_burst_bytes = 12000;
  std::string cold = pingpong(p, {10000}, 1);
  EXPECT_NEAR(fields(cold, "latency_us")[0], 90, 1e-9) << cold;
  EXPECT_EQ(fields(pingpong(p, {10000}, 1, 1, 0), "latency_us"), fields(cold, "latency_us"));
  std::string warm = pingpong(p, {10000}, 1, 1, 20);
  EXPECT_GT(fields(warm, "latency_us")[0], 100) << warm;
  // The warm-up is not timed: 21 round trips, the last one's time alone.
  EXPECT_LT(fields(pingpong(p, {10000}, 21, 1, 0), "latency_us")[0], fields(warm, "latency_us")[0]);
}

TEST(TokenBucket, MessageLargerThanTheBurstFinishesAtTheSustainedRate)
{
  PlatformSpec p = base();
  p.bucket_gbps = 0.2;
  p.bucket_burst_bytes = 4000;
  // s = 10000 > 1.25 b = 5000: b/(R - r) = 40 us at line rate (5000 bytes), then
  // 5000/r = 200 us: 240 us through the bucket, + L = 250 one way. In the 500 us round
  // trip the bucket refills 25 * 260 > b: every iteration is alike.
  std::string r = pingpong(p, {10000}, 4);
  EXPECT_NEAR(fields(r, "latency_us")[0], 10 + 4000 / 100.0 + (10000 - 5000) / 25.0, 1e-9) << r;
}

TEST(TokenBucket, AMessagesHeadersCostTokensAndLineTime)
{
  PlatformSpec p = base();
  p.bucket_gbps = 0.2;
  p.bucket_burst_bytes = 4000;
  p.bucket_message_bytes = 1000;
  // As above with s + h = 11000 bytes through the bucket: 40 us at line rate (5000
  // bytes), then 6000/r = 240 us; the payload's last byte leaves with the headers':
  // 10 + 40 + 240 = 290 us (without h: 250). The round trip refills the bucket.
  std::string r = pingpong(p, {10000}, 4);
  EXPECT_NEAR(fields(r, "latency_us")[0], 10 + 4000 / 100.0 + (11000 - 5000) / 25.0, 1e-9) << r;
}

TEST(TokenBucket, ContinuousTrafficRunsAtTheSustainedRate)
{
  PlatformSpec p = base();
  p.bucket_gbps = 0.2;
  p.bucket_burst_bytes = 0;
  // Two ranks exchange: each repetition a node sends two 10000-byte messages back to back
  // through an empty bucket: 2 s/r = 800 us, the last arriving L later. Between
  // repetitions the bucket gains nothing (depth 0): every repetition takes L + 2s/r = 810
  // (without the bucket: L + 2s/R = 170).
  expect_every_exchange_takes(p, 10000, 10 + 2 * 10000 / 25.0);
}

// ---- Pacing: a connection's own rate ----------------------------------------------------
// p = 0.2 Gbit/s = 25 bytes/us per connection on a 125 bytes/us NIC; messages up to
// 1000 bytes leave unpaced (one packet). Both transports carry it.

PlatformSpec paced(TransportKind transport)
{
  PlatformSpec p = base();
  p.transport = transport;
  p.pacing_gbps = 0.2;
  p.pacing_above_bytes = 1000;
  return p;
}

TEST(Pacing, OnePacketLeavesAtLineRateALongerMessageAtTheConnectionsRate)
{
  for (TransportKind t : {TransportKind::Flow, TransportKind::Queue}) {
    // 1000 B: L + s/R = 10 + 8; 1001 B: L + s/p = 10 + 40.04; 10000 B: 10 + 400.
    std::string r = pingpong(paced(t), {1000, 1001, 10000}, 3);
    EXPECT_NEAR(fields(r, "latency_us")[0], 18, 1e-9) << r;
    EXPECT_NEAR(fields(r, "latency_us")[1], 50.04, 1e-9) << r;
    EXPECT_NEAR(fields(r, "latency_us")[2], 410, 1e-9) << r;
  }
}

TEST(Pacing, ConnectionsLeavingOneNodeOverlap)
{
  for (TransportKind t : {TransportKind::Flow, TransportKind::Queue}) {
    // Exchange, 4 ranks on 2 nodes: each node sends two 10000-byte messages to the other
    // at once (0->3 and 1->2 leave node 0), each paced at 25 of the NIC's 125 bytes/us:
    // they do not contend and each arrives at L + s/p = 410. A NIC-wide cap of 25
    // bytes/us would serialise them: L + 2s/p = 810. The intra-node pairs take 3.7.
    std::string r = exchange(paced(t), 4, 2, 10000, 1);
    EXPECT_NEAR(fields(r, "t_max_us")[0], 410, 1e-9) << r;
    EXPECT_NEAR(fields(r, "t_min_us")[0], 410, 1e-9) << r;
  }
}

TEST(Pacing, TheBucketStillCapsTheNodesAggregate)
{
  for (TransportKind t : {TransportKind::Flow, TransportKind::Queue}) {
    PlatformSpec p = paced(t);
    p.bucket_gbps = 0.1;  // r = 12.5 bytes/us, empty bucket
    p.bucket_burst_bytes = 0;
    // The same exchange: the sender's bucket passes node 0's two messages one after the
    // other at r (the first done at s/r = 800, the second at 1600), slower than their
    // pacing: the transport moves each at line rate at the end, and the last arrives
    // at L + 2s/r = 1610.
    std::string r = exchange(p, 4, 2, 10000, 1);
    EXPECT_NEAR(fields(r, "t_max_us")[0], 1610, 1e-9) << r;
  }
}

// ---- Per-node message cost ------------------------------------------------------------

TEST(NicMessageCost, EachMessagePaysTheSendersAndTheReceiversQueue)
{
  PlatformSpec p = base();
  p.nic_message_us = 5;
  // c at the sending node's NIC, then the wire, then c at the receiving node's:
  // L + s/R + 2c = 10 + 8 + 10 at 1000 bytes, 10 + 10 at 0.
  std::string r = pingpong(p, {0, 1000}, 3);
  EXPECT_NEAR(fields(r, "latency_us")[0], 20, 1e-9) << r;
  EXPECT_NEAR(fields(r, "latency_us")[1], 28, 1e-9) << r;
}

TEST(NicMessageCost, IntraNodeMessagesBypassTheNic)
{
  PlatformSpec p = base();
  p.nic_message_us = 5;
  // Both ranks on one node: li + s/Bi = 0.5 + 6250/6250.
  std::string r = pingpong(p, {6250}, 3, 2);
  EXPECT_NEAR(fields(r, "latency_us")[0], 1.5, 1e-9) << r;
}

// ---- Token bucket plus shared NIC queue, several ranks per node -----------------------
// One IMB Exchange repetition of s = 1000 bytes on 2 nodes, c = 5, r = 25 bytes/us, empty
// bucket (s/r = 40 >= c), L = 10. In the periodic chain exactly two messages leave each
// node (the chain's two crossings), posted at t = 0 by the lowest crossing rank first;
// the others stay inside the node (0.5 + 1000/6250 = 0.66 us).
// Sender's node: queue c and 2c; bucket: first message done at c + s/r, the second
// waits for it: c + 2s/r; each arrives L after. Receiver's node: bucket adds nothing (the
// bytes came paced), queue: first handed over at 2c + s/r + L, second at 2c + 2s/r + L.
// A send completes when its bytes arrived (c + s/r + L, c + 2s/r + L). A rank's
// repetition ends when both its receives and both its sends have:
//   the rank receiving the second message: 2c + 2s/r + L = 100
//   the rank sending the second message (receiving the first): c + 2s/r + L = 95
//   ranks with no crossing: their messages share the node's loopback link (next test)

namespace {
PlatformSpec bucket_and_queue()
{
  PlatformSpec p = base();
  p.bucket_gbps = 0.2;
  p.bucket_burst_bytes = 0;
  p.nic_message_us = 5;
  return p;
}
}  // namespace

TEST(Combination, BucketAndSharedQueueAtTwoRanksPerNode)
{
  // Ranks 0,1 | 2,3. Crossings: 0->3 (rank 0's left) and 1->2 from node 0; 2->1, 3->0
  // from node 1. Rank 0 and rank 2 receive the second messages (100); ranks 1 and 3 send
  // them (95). t_avg = (100 + 95 + 100 + 95) / 4.
  std::string r = exchange(bucket_and_queue(), 4, 2, 1000, 1);
  EXPECT_NEAR(fields(r, "t_max_us")[0], 100, 1e-9) << r;
  EXPECT_NEAR(fields(r, "t_min_us")[0], 95, 1e-9) << r;
  EXPECT_NEAR(fields(r, "t_avg_us")[0], 97.5, 1e-9) << r;
}

TEST(Combination, BucketAndSharedQueueAtFourRanksPerNode)
{
  // Ranks 0-3 | 4-7. Crossings: 0->7 then 3->4 from node 0, 4->3 then 7->0 from node 1.
  // Ranks 0 and 4 receive the second messages (100), ranks 3 and 7 send them (95), ranks
  // 1, 2, 5, 6 only talk inside the node: the node's six intra-node messages (0<->1,
  // 1<->2, 2<->3) share its loopback link from t = 0 and all end at 0.5 + 6*1000/6250.
  std::string r = exchange(bucket_and_queue(), 8, 4, 1000, 1);
  double intra = 0.5 + 6 * 1000 / 6250.0;
  EXPECT_NEAR(fields(r, "t_max_us")[0], 100, 1e-9) << r;
  EXPECT_NEAR(fields(r, "t_min_us")[0], intra, 1e-9) << r;
  EXPECT_NEAR(fields(r, "t_avg_us")[0], (2 * 100 + 2 * 95 + 4 * intra) / 8, 1e-9) << r;
}

// ---- CPU sharing ----------------------------------------------------------------------

TEST(Oversubscribe, PassesAndOverheadsStretchByRanksPerCore)
{
  PlatformSpec p = base();
  p.cores = 1;
  p.pass_us = 3;
  p.send_overhead_us = 1;
  p.recv_overhead_us = 2;
  // Refused unless asked for.
  EXPECT_THROW(pingpong(p, {0}, 1, 2), std::invalid_argument);
  p.oversubscribe = true;
  // Two ranks on one core: pass 6, o_s 2, o_r 4; intra path 0.5 us.
  // Rank 0: pass 0-6 (timing starts at 6), ping leaves 8, arrives 8.5. Rank 1 idles on its
  // 6 us grid: pass at 12, ends 12+6+4 = 22, pong leaves 24, arrives 24.5. Rank 0's grid
  // from 8: pass at 26, ends 26+6+4 = 36. Half the round trip: (36 - 6) / 2 = 15.
  std::string r = pingpong(p, {0}, 1, 2);
  EXPECT_NEAR(fields(r, "latency_us")[0], 15, 1e-9) << r;
}

// ---- Protocol -------------------------------------------------------------------------

TEST(Rendezvous, LargeMessagesPayTheHandshake)
{
  PlatformSpec p = base();
  p.eager_threshold_bytes = 1000;
  // Up to 1000 bytes eager: L + s/R. Above: request to send (L), clear to send (L), then
  // the data (L + s/R), while the receiver blocks in its receive: 3L + s/R.
  std::string r = pingpong(p, {0, 1000, 4096}, 3);
  auto lat = fields(r, "latency_us");
  EXPECT_NEAR(lat[0], 10, 1e-9) << r;
  EXPECT_NEAR(lat[1], 10 + 8, 1e-9) << r;
  EXPECT_NEAR(lat[2], 30 + 4096 / 125.0, 1e-9) << r;
}

TEST(Rendezvous, FirstFragmentWithTheRequestKeepsTheBytes)
{
  PlatformSpec p = base();
  p.eager_threshold_bytes = 1000;
  p.rendezvous_first_bytes = 1000;
  // Open MPI's ob1: the request carries the first 1000 bytes (L + 1000/R), the answer L,
  // the rest L + 3096/R: 3L + 4096/R, as without it (each byte crosses once).
  EXPECT_NEAR(fields(pingpong(p, {4096}, 3), "latency_us")[0], 30 + 4096 / 125.0, 1e-9);
}

TEST(Rendezvous, TheFirstFragmentOverlapsTheHandshake)
{
  // A token bucket at r = 0.2 Gbit/s (25 bytes/us) with no depth: each node's NIC passes
  // its bytes in order at r. Two ranks exchange two 10000-byte messages each way; as in
  // IMB (Isend, Isend, Recv, Recv) a rank answers a request when its blocking receive
  // takes it, the second only once the first message is in.
  // Requests without data: request 1 in at L, answered, cleared at 2L; message 1 leaves
  // over s/r and is in at 3L + s/r; request 2 (in since L) is answered then, message 2
  // in at 5L + 2s/r = 850.
  // With the first T = 1000 bytes in each request: the requests leave over [0, T/r] and
  // [T/r, 2T/r] (to 80); request 1 is in at T/r + L = 50, its answer waits behind this
  // node's request 2 (to 80) and clears the rest at 90; the rest (s - T) is in at 90 +
  // (s - T)/r + L = 460; request 2 is answered then, its rest in at 460 + 2L + (s - T)/r
  // = 840 = 4L + 2s/r: one latency less than without (T/r > L).
  PlatformSpec p = base();
  p.bucket_gbps = 0.2;
  p.eager_threshold_bytes = 1000;
  expect_every_exchange_takes(p, 10000, 50 + 2 * 10000 / 25.0);
  p.rendezvous_first_bytes = 1000;
  expect_every_exchange_takes(p, 10000, 40 + 2 * 10000 / 25.0);
}

TEST(Rendezvous, ExchangeAnswersItsRightNeighbourAfterItsLeft)
{
  // IMB Exchange on 4 ranks, block (0,1 | 2,3), every message a rendezvous: rank r
  // receives from r - 1, then from r + 1, and answers a request only when that receive is
  // posted. Intra-node (l = 0.5, s/Ri = 1.6): rank 1 answers 0 and rank 3 answers 2 at
  // l; those messages are in at 2l + (l + s/Ri) = 3.1. The four inter-node requests are in
  // at L; each is awaited (rank 0 waits for 3, rank 2 for 1, and ranks 1 and 3, done with
  // their left, for 2 and 0): answered at L, cleared at 2L, and the four messages (two
  // leaving each node, R/2 each) in at 3L + 2s/R = 190. Only then do ranks 0 and 2 answer
  // their right neighbours' intra-node requests (in since l): those messages are in at
  // 190 + 2l + s/Ri = 192.6, and every rank's last send or receive with them. Taking
  // requests in any order (the intra-node ones first) ends all at 190.
  PlatformSpec p = base();
  p.eager_threshold_bytes = 1000;
  std::string r = exchange(p, 4, 2, 10000, 3);
  EXPECT_NEAR(fields(r, "t_min_us")[0], 30 + 2 * 10000 / 125.0 + 1 + 1.6, 1e-9) << r;
  EXPECT_NEAR(fields(r, "t_max_us")[0], 30 + 2 * 10000 / 125.0 + 1 + 1.6, 1e-9) << r;
}

TEST(ImbExchange, ReceivesLeftThenRightThenNoneUntilItsSendsComplete)
{
  // IMB_exchange.c, one repetition of rank 1 of 4: MPI_Isend to the right (2), then to the
  // left (0); MPI_Recv from the left, then from the right; MPI_Waitall on the sends. While
  // it waits for its sends a neighbour's next message is not taken (its next receive is
  // not posted yet); once they are done the next repetition posts and receives from the
  // left again.
  PlatformSpec p = base();
  p.nodes = 4;
  WorkloadSpec w = exchange_spec(4, 1, 1000, 2);
  Sim sim(p, w, nullptr);
  ImbChain chain(w);
  std::vector<uint32_t> out;
  chain.pass(sim, 1, nullptr, 0, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(sim.message(out[0]).to, 2);
  EXPECT_EQ(sim.message(out[1]).to, 0);
  EXPECT_EQ(chain.awaited_source(1), 0);
  Message in;
  out.clear();
  chain.pass(sim, 1, &in, 1e-6, out);
  EXPECT_EQ(chain.awaited_source(1), 2);
  chain.pass(sim, 1, &in, 2e-6, out);
  EXPECT_EQ(chain.awaited_source(1), Workload::kNoSource);
  EXPECT_FALSE(chain.wants_pass(1));
  Message sent;
  sent.from = 1;
  chain.on_send_complete(sim, sent);
  EXPECT_EQ(chain.awaited_source(1), Workload::kNoSource);
  chain.on_send_complete(sim, sent);
  EXPECT_TRUE(chain.wants_pass(1));
  chain.pass(sim, 1, nullptr, 3e-6, out);
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(chain.awaited_source(1), 0);
  // Sendrecv and PingPing receive from one source: any.
  w.kind = WorkloadKind::SendRecv;
  EXPECT_EQ(ImbChain(w).awaited_source(1), Workload::kAnySource);
}

// ---- Probe visibility -----------------------------------------------------------------

TEST(Probe, HeaderAndPostLetTheReceiverStartEarlierAndBlock)
{
  PlatformSpec p = base();
  p.pass_us = 3;
  // s = 1250: s/R = 10. One round trip.
  // arrival: rank 0's pass ends at 3, ping arrives 3+10+10 = 23; rank 1's 3 us grid: pass
  //   at 24, ends 27; pong arrives 47; rank 0's grid from 3: pass at 48, ends 51.
  //   (51 - 3) / 2 = 24.
  // header: the header is at rank 1 at 13: pass at 15 blocks until 23, ends 26; the
  //   pong's header is at rank 0 at 36, on its grid: blocks until 46, ends 49. 23.
  // post: rank 1 sees the ping at 3: its pass at 3 blocks until 23, ends 26; rank 0 sees
  //   the pong at 26, passes at 27, blocks until 46, ends 49. 23.
  EXPECT_NEAR(fields(pingpong(p, {1250}, 1), "latency_us")[0], 24, 1e-9);
  p.probe = Probe::Header;
  EXPECT_NEAR(fields(pingpong(p, {1250}, 1), "latency_us")[0], 23, 1e-9);
  p.probe = Probe::Post;
  EXPECT_NEAR(fields(pingpong(p, {1250}, 1), "latency_us")[0], 23, 1e-9);
}

TEST(Probe, ZeroHostCostsKeepThePingPongContract)
{
  // With no pass cost every mode receives the last byte at L + s/R and answers at once.
  for (Probe probe : {Probe::Arrival, Probe::Header, Probe::Post}) {
    PlatformSpec p = base();
    p.probe = probe;
    EXPECT_NEAR(fields(pingpong(p, {4096}, 3), "latency_us")[0], 10 + 4096 / 125.0, 1e-9);
  }
}

// ---- Noise ----------------------------------------------------------------------------

TEST(Noise, EmpiricalDelayAddsToEveryNetworkMessage)
{
  PlatformSpec p = base();
  p.noise_scope = NoiseScope::Message;
  p.noise_distribution = NoiseDistribution::Empirical;
  p.noise_values_us = {7};
  // One value: every one-way trip gains exactly 7: L + s/R + 7.
  EXPECT_NEAR(fields(pingpong(p, {1000}, 3), "latency_us")[0], 10 + 8 + 7, 1e-9);
}

TEST(Noise, LognormalPerMessageHasTheDistributionsMean)
{
  PlatformSpec p = base();
  p.noise_scope = NoiseScope::Message;
  p.noise_median_us = 10;
  p.noise_sigma = 0.5;
  // The average over 4000 one-way trips: L + E[d], E[d] = median * exp(sigma^2 / 2) =
  // 11.3315; the standard error of 4000 draws (sd 6.04 us) is 0.096: allow 5 of them.
  double lat = fields(pingpong(p, {0}, 2000), "latency_us")[0];
  EXPECT_NEAR(lat, 10 + 10 * std::exp(0.125), 0.5);
}

TEST(Noise, PerRunDrawShiftsEveryMessageAlikeAndFollowsTheSeed)
{
  PlatformSpec p = base();
  p.noise_scope = NoiseScope::Run;
  p.noise_median_us = 10;
  p.noise_sigma = 0.5;
  // One draw d for the run: every size is L + s/R + d with the same d.
  std::string a = pingpong(p, {0, 1000}, 3);
  auto lat = fields(a, "latency_us");
  double d = lat[0] - 10;
  EXPECT_GT(d, 0);
  EXPECT_NEAR(lat[1], 10 + 8 + d, 1e-9);
  // Same seed: byte-identical; sigma 0: d is the median.
  EXPECT_EQ(strip_rss(a), strip_rss(pingpong(p, {0, 1000}, 3)));
  p.noise_sigma = 0;
  EXPECT_NEAR(fields(pingpong(p, {0}, 3), "latency_us")[0], 20, 1e-9);
}

// ---- The staged path carries the plain contract ------------------------------------

TEST(Staged, WithNothingToDoItGivesThePlainPathsResultsExactly)
{
  // An eager threshold no message reaches puts every message on the staged path (timer
  // actor, host-to-host transfers) with no mechanism acting: byte-identical results,
  // contention included (shared destinations on 2 ranks per node).
  PlatformSpec p = base();
  p.nodes = 4;
  WorkloadSpec w;
  w.kind = WorkloadKind::RoundTrip;
  w.ranks = 8;
  w.ranks_per_node = 2;
  w.exchanges = 40;
  w.destinations = Destinations::Shared;
  std::string plain = simulate(p, w);
  p.eager_threshold_bytes = int64_t{1} << 40;
  EXPECT_EQ(strip_rss(plain), strip_rss(simulate(p, w)));
}

TEST(Probe, ExchangePostsItsSendsBeforeItBlocks)
{
  // IMB Exchange posts both sends before it waits: under every probe mode a repetition
  // on 4 nodes is L + 2s/R (two sends share each NIC direction), as in the plain model.
  PlatformSpec p = base();
  p.nodes = 4;
  p.latency_us = 20;
  for (Probe probe : {Probe::Arrival, Probe::Header, Probe::Post}) {
    p.probe = probe;
    std::string r = exchange(p, 4, 1, 65536, 7);
    EXPECT_NEAR(fields(r, "t_max_us")[0], 20 + 2 * 65536 / 125.0, 1e-9) << r;
  }
}
