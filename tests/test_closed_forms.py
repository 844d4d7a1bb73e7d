"""Closed forms, derived by hand below, that catch a wrong model parameter: send and
receive overheads swapped, per_byte_overhead_ns, gap_us or backbone_gbps dropped, p99
filled with p50, the relay SD replaced by the mean, and the fat-tree, torus and dragonfly
zones not simulated (or simulated with the wrong routes).

Notation: L = latency_us, S(s) = s*8/(bandwidth_gbps*1000) us (serialisation of s bytes),
W(s) = L + S(s) (one isolated message, the platform contract), o_s / o_r the send and
receive overheads, b = per_byte_overhead_ns * 1e-3 us per byte, so a send of s bytes
costs o_s + b*s and a receive o_r + b*s (README, "A rank"). pass_us = 0 throughout: a
rank takes a message the moment it arrives.
"""
import math

import networkx as nx
import pytest

import hopsim
from hopsim.platforms import Platform

# SimGrid's timing precision is 1e-9 s; sums of a few dozen events stay within this.
TOL = 2e-3


def platform(**kw) -> Platform:
    base = dict(name="closed-form", nodes=4, cores=1, latency_us=20.0, bandwidth_gbps=1.0)
    base.update(kw)
    return Platform(**base)


def S(s, gbps=1.0):
    return s * 8 / (gbps * 1000)


def test_pingpong_pays_both_overheads_and_the_per_byte_cost_on_each_side():
    # One osu_latency iteration, from rank 0's pass that sends to its pass that receives
    # the reply: rank 0 sends (o_s + b*s), the wire (W), rank 1 receives (o_r + b*s) and
    # sends back in the same pass (o_s + b*s), the wire (W), rank 0 receives (o_r + b*s).
    # osu_latency reports half of it: o_s + o_r + 2*b*s + W(s).
    o_s, o_r, pb, s = 7.0, 3.0, 0.25, 4096
    p = platform(nodes=2, send_overhead_us=o_s, recv_overhead_us=o_r, per_byte_overhead_ns=pb)
    row = hopsim.simulate(p, "pingpong", ranks=2, sizes=[s], iterations=10).results["rows"][0]
    assert row["latency_us"] == pytest.approx(o_s + o_r + 2 * pb * 1e-3 * s + 20 + S(s), abs=TOL)


def test_exchange_tells_send_from_receive_overhead():
    # IMB Exchange on 4 single-rank nodes, s = 65536 bytes (S = 524.288 us), o_s = 10,
    # o_r = 2, b*s = 0.5e-3 * 65536 = 32.768 us. Let o = o_s + b*s = 42.768 (a send) and
    # r = o_r + b*s = 34.768 (a receive). A repetition starts at the pass that posts it:
    # the left send is injected at +o, the right at +2o. Each NIC direction carries two
    # flows (a rank's own two sends up, its two neighbours' sends down, the same timing
    # on every rank): the first flow runs alone for o, then both share at half rate, so
    # the first ends at +L + 2S and the second at +L + 2S + o (needs S >= o).
    # The receiver takes the first at +L+2S (done r later), the second at
    # max(+L+2S+r, +L+2S+o), and posts the next repetition in that pass after receiving:
    #     t = L + 2S + r + max(r, o) = 20 + 1048.576 + 34.768 + 42.768 = 1146.112 us.
    # Swapping o_s and o_r gives 20 + 1048.576 + 42.768 + 42.768 = 1154.112; dropping
    # per_byte_overhead_ns gives 20 + 1048.576 + 2 + 10 = 1080.576.
    p = platform(send_overhead_us=10.0, recv_overhead_us=2.0, per_byte_overhead_ns=0.5)
    row = hopsim.simulate(p, "exchange", ranks=4, sizes=[65536], repetitions=10).results["rows"][0]
    for stat in ("t_min_us", "t_max_us", "t_avg_us"):
        assert row[stat] == pytest.approx(1146.112, abs=TOL), stat


def test_gap_spaces_a_ranks_injections():
    # 0-byte pingpong, no host costs: the natural cycle is 2W = 40 us, but gap_us = 1000
    # holds each of rank 0's sends until 1000 us after its previous one. Its first send
    # goes at 0 (no previous send), the k-th at (k-1)*1000; the 10th reply is back at
    # 9*1000 + 40 = 9040 us. osu_latency reports 9040 / (2*10) = 452 us (without gap: 20).
    p = platform(nodes=2, gap_us=1000.0)
    row = hopsim.simulate(p, "pingpong", ranks=2, sizes=[0], iterations=10).results["rows"][0]
    assert row["latency_us"] == pytest.approx((9 * 1000 + 40) / 20, abs=TOL)


def test_backbone_bandwidth_bounds_a_message():
    # Star with a backbone: a route crosses the sender's NIC (10 Gbit/s), the backbone
    # (0.5 Gbit/s, no latency) and the receiver's NIC; the slowest link sets the rate:
    # W = 20 + 65536*8/500 = 1068.576 us (without the backbone: 20 + 52.4288).
    p = platform(nodes=2, bandwidth_gbps=10.0, backbone_gbps=0.5)
    row = hopsim.simulate(p, "pingpong", ranks=2, sizes=[65536], iterations=10).results["rows"][0]
    assert row["latency_us"] == pytest.approx(20 + S(65536, 0.5), abs=TOL)


def test_percentiles_of_a_two_valued_round_trip_distribution():
    # 4 ranks, 2 per node, 0-byte request and reply, no host costs: a round trip to a rank
    # of the same node (itself or its neighbour) crosses the node's intra link twice,
    # a = 2 * 0.5 = 1 us; to the other node it crosses two NIC halves each way,
    # b = 2 * 20 = 40 us. Zero-byte messages share no bandwidth, so every round trip is
    # exactly a or b. From the mean of n = 100 round trips, n_b = n*(mean - a)/(b - a);
    # nearest-rank percentiles are the ceil(p*n)-th smallest: p50 is a iff
    # n - n_b >= 50, p99 is b iff n - n_b < 99.
    p = platform(nodes=2, cores=2, intra_latency_us=0.5)
    r = hopsim.simulate(p, "roundtrip", ranks=4, ranks_per_node=2, exchanges=25,
                        request_bytes=0, reply_bytes=0, seed=1).results["rtt_us"]
    a, b, n = 1.0, 40.0, 100
    n_b = round(n * (r["mean"] - a) / (b - a))
    assert n * r["mean"] == pytest.approx((n - n_b) * a + n_b * b, abs=n * TOL)
    p50 = a if n - n_b >= math.ceil(0.5 * n) else b
    p99 = a if n - n_b >= math.ceil(0.99 * n) else b
    assert p50 != p99, "seed 1 must give a distribution whose p50 and p99 differ"
    assert r["p50"] == pytest.approx(p50, abs=TOL)
    assert r["p99"] == pytest.approx(p99, abs=TOL)
    assert (r["min"], r["max"]) == (pytest.approx(a, abs=TOL), pytest.approx(b, abs=TOL))


def test_relay_statistics_of_a_star_overlay():
    # A networkx star on 4 ranks: rank 0 is the hub, 1..3 leaves. Every leaf-to-leaf
    # message (request or reply) is relayed once by the hub; nothing else is relayed. So
    # the per-rank relay counts are (R, 0, 0, 0) with R = relays max: mean R/4, population
    # SD sqrt(R^2/4 - (R/4)^2) = R*sqrt(3)/4.
    p = platform(intra_latency_us=0.5)
    r = hopsim.simulate(p, "roundtrip", ranks=4, exchanges=20, request_bytes=0, reply_bytes=0,
                        overlay=nx.star_graph(3)).results
    R = r["relays"]["max"]
    assert R > 0
    assert r["relays"]["mean"] == pytest.approx(R / 4)
    assert r["relays"]["sd"] == pytest.approx(R * math.sqrt(3) / 4)


def zone(topology, parameters, nodes):
    return platform(nodes=nodes, topology=topology, topology_parameters=parameters,
                    intra_latency_us=0.5)


def _lone_message(p, s):
    return hopsim.simulate(p, "pingpong", ranks=2, sizes=[s], iterations=10).results["rows"][0]["latency_us"]


def test_torus_zone():
    # SimGrid's torus "4,4": node i at (i % 4, i // 4); every hop is one link with the
    # platform's latency and bandwidth, routed dimension by dimension. Nodes 0 and 1 are
    # one hop apart: W = L + S. A 0-byte round trip to a node h hops away is 2*h*L; the
    # farthest node is 2 + 2 = 4 hops (160 us); from any node the 16 destinations lie at
    # 0, 1, 2, 3, 4 hops 1, 4, 6, 4, 1 times, so the median of 800 uniform draws is at
    # 2 hops (P(<= 1) = 5/16, P(<= 2) = 11/16): p50 = 80 us. Self: 2 * 0.5 = 1 us.
    p = zone("torus", "4,4", 16)
    assert _lone_message(p, 65536) == pytest.approx(20 + S(65536), abs=TOL)
    r = hopsim.simulate(p, "roundtrip", ranks=16, exchanges=50, request_bytes=0,
                        reply_bytes=0).results["rtt_us"]
    assert r["max"] == pytest.approx(2 * 4 * 20, abs=TOL)
    assert r["p50"] == pytest.approx(2 * 2 * 20, abs=TOL)
    assert r["min"] == pytest.approx(1.0, abs=TOL)


def test_fat_tree_zone():
    # SimGrid's fat-tree "2;4,4;1,2;1,2": 4 leaf switches of 4 nodes, 2 top switches.
    # Nodes 0 and 1 share a leaf switch: node -> switch -> node, 2 links: 2L + S (a star
    # would give L + S). Nodes under different leaves go up to a top switch: 4 links one
    # way, so a 0-byte round trip is 8L = 160 us; 12 of 16 destinations are under
    # another leaf, so the median round trip is also 160 us. Self: 1 us.
    p = zone("fat-tree", "2;4,4;1,2;1,2", 16)
    assert _lone_message(p, 65536) == pytest.approx(2 * 20 + S(65536), abs=TOL)
    r = hopsim.simulate(p, "roundtrip", ranks=16, exchanges=50, request_bytes=0,
                        reply_bytes=0).results["rtt_us"]
    assert r["max"] == pytest.approx(8 * 20, abs=TOL)
    assert r["p50"] == pytest.approx(8 * 20, abs=TOL)
    assert r["min"] == pytest.approx(1.0, abs=TOL)


def test_dragonfly_zone():
    # SimGrid's dragonfly "3,4;4,3;5,1;2": 3 groups x 4 chassis x 5 routers x 2 nodes.
    # Nodes 0 and 1 hang off one router: node link up, node link down, 2L + S. The longest
    # route (SimGrid's DragonflyZone: to another group through the chassis and router
    # that hold the global link, and the same on the far side) is node link, green link
    # to that router, black link to that chassis, blue link between groups, black, green,
    # node link: 7 links, so a 0-byte round trip is 14L = 280 us. Self: 1 us.
    p = zone("dragonfly", "3,4;4,3;5,1;2", 120)
    assert _lone_message(p, 65536) == pytest.approx(2 * 20 + S(65536), abs=TOL)
    r = hopsim.simulate(p, "roundtrip", ranks=120, exchanges=20, request_bytes=0,
                        reply_bytes=0).results["rtt_us"]
    assert r["max"] == pytest.approx(14 * 20, abs=TOL)
    assert r["min"] == pytest.approx(1.0, abs=TOL)
