"""Closed forms the engine must reproduce through the whole Python path.

With zero host costs one isolated message of s bytes between two nodes takes exactly
latency_us + s*8/(bandwidth_gbps*1000) us (the issue's platform contract).
"""
import pytest

import hopsim
from hopsim.platforms import Platform

# SimGrid's default timing precision is 1e-9 s.
TOLERANCE_US = 2e-3
SIZES = [0, 1, 1000, 4096, 65536, 1048576]


def cluster(nodes: int, latency_us=20.0, bandwidth_gbps=1.0) -> Platform:
    return Platform(name=f"analytic-{nodes}", nodes=nodes, cores=1, latency_us=latency_us,
                    bandwidth_gbps=bandwidth_gbps)


def one_way_us(p: Platform, s: int) -> float:
    return p.latency_us + s * 8 / (p.bandwidth_gbps * 1000)


@pytest.mark.parametrize("latency_us, bandwidth_gbps", [(10.0, 1.0), (1.5, 40.0), (100.0, 10.0)])
def test_pingpong_latency_is_latency_plus_size_over_bandwidth(latency_us, bandwidth_gbps):
    p = cluster(2, latency_us, bandwidth_gbps)
    rows = hopsim.simulate(p, "pingpong", ranks=2, sizes=SIZES, iterations=10).results["rows"]
    assert [r["bytes"] for r in rows] == SIZES
    for r in rows:
        assert r["latency_us"] == pytest.approx(one_way_us(p, r["bytes"]), abs=TOLERANCE_US)
        if r["bytes"]:
            # osu_bw's MB/s (10^6 bytes) of a message that takes latency_us one way.
            assert r["bandwidth_mbytes_per_sec"] == pytest.approx(r["bytes"] / r["latency_us"], rel=1e-6)


def test_two_node_preset_matches_its_closed_form():
    rows = hopsim.simulate("two-nodes", "pingpong", ranks=2, sizes=[65536]).results["rows"]
    assert rows[0]["latency_us"] == pytest.approx(10 + 65536 * 8 / 1000, abs=TOLERANCE_US)


@pytest.mark.parametrize("request_bytes, reply_bytes", [(4000, 4000), (4000, 0), (0, 0), (100, 65536)])
def test_a_lone_round_trip_between_two_idle_nodes_is_two_one_way_times(request_bytes, reply_bytes):
    # Each of the two ranks makes one round trip; the two never share a link direction
    # (full-duplex NICs) nor a host cost (zero), so each is a lone round trip.
    p = cluster(2)
    r = hopsim.simulate(p, "roundtrip", ranks=2, exchanges=1, request_bytes=request_bytes,
                        reply_bytes=reply_bytes).results
    expected = one_way_us(p, request_bytes) + one_way_us(p, reply_bytes)
    for stat in ("min", "max", "mean"):
        assert r["rtt_us"][stat] == pytest.approx(expected, abs=TOLERANCE_US)


@pytest.mark.parametrize("latency_us, bandwidth_gbps", [(20.0, 1.0), (5.0, 10.0)])
def test_imb_exchange_on_four_single_rank_nodes(latency_us, bandwidth_gbps):
    # Each rank sends s bytes left and right through its one NIC: the two sends share the
    # uplink (2s of serialisation), the two receptions share the downlink.
    p = cluster(4, latency_us, bandwidth_gbps)
    rows = hopsim.simulate(p, "exchange", ranks=4, sizes=[0, 1024, 65536],
                           repetitions=10).results["rows"]
    for r in rows:
        expected = latency_us + 2 * r["bytes"] * 8 / (bandwidth_gbps * 1000)
        for stat in ("t_min_us", "t_max_us", "t_avg_us"):
            assert r[stat] == pytest.approx(expected, abs=TOLERANCE_US), (r["bytes"], stat)
        assert r["repetitions"] == 10
        assert r["mbytes_per_sec"] == pytest.approx(4 * r["bytes"] / r["t_max_us"], rel=1e-9)


def test_imb_exchange_figure_without_cross_traffic():
    # docs/model.md, the network contract: L + 2s/R with cross-traffic off; 4 nodes,
    # 20 us, 1 Gbit/s, 65536 bytes: 20 + 2 * 65536 / 125 = 1068.58 us.
    rows = hopsim.simulate(cluster(4), "exchange", ranks=4, sizes=[65536], repetitions=5).results["rows"]
    assert round(rows[0]["t_max_us"], 2) == 1068.58
