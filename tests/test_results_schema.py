"""The JSON schema of a Result, for each workload, through the real engine."""
import json
import numbers

import pytest

import hopsim

TOP = {"platform": str, "platform_nodes": int, "platform_hash": str, "workload": str, "ranks": int, "ranks_per_node": int, "seed": int,
       "simulated_seconds": numbers.Real, "wall_seconds": numbers.Real, "messages": int,
       "results": dict, "parameters": dict}
ROUNDTRIP = {"rtt_us": {"mean", "p50", "p99", "min", "max"},
             "per_rank_mean_us": {"average", "sd"}}
ROUNDTRIP_SCALARS = {"lc_average_of_averages_us", "ray_average_for_all_ranks_us",
                     "ray_standard_deviation_us"}


def check_top(doc: dict, workload: str, ranks: int):
    assert list(doc) == list(TOP)
    for key, kind in TOP.items():
        assert isinstance(doc[key], kind), key
    assert doc["workload"] == workload and doc["ranks"] == ranks
    assert doc["simulated_seconds"] > 0 and doc["wall_seconds"] > 0 and doc["messages"] > 0


def test_pingpong_schema():
    r = hopsim.simulate("two-nodes", "pingpong", ranks=2, sizes=[0, 1024], iterations=5)
    doc = json.loads(r.to_json())
    check_top(doc, "pingpong", 2)
    # warmup -1: osu's own warm-up with its own counts, none with explicit iterations.
    assert doc["parameters"] == {"sizes": [0, 1024], "iterations": 5, "warmup": -1,
                                 "reception": "any-source", "transport": "flow",
                                 "placement": "block"}
    warm = hopsim.simulate("two-nodes", "pingpong", ranks=2, sizes=[0], iterations=5, warmup=3)
    assert json.loads(warm.to_json())["parameters"]["warmup"] == 3
    assert warm.messages == 2 * (5 + 3)
    assert list(doc["results"]) == ["rows"]
    assert [set(row) for row in doc["results"]["rows"]] == \
        [{"bytes", "latency_us", "bandwidth_mbytes_per_sec"}] * 2
    # osu_latency: iterations round trips per size, two messages each (warm-up excluded
    # from the statistics may add messages, never remove them).
    assert doc["messages"] >= 2 * 2 * 5


def test_exchange_schema():
    p = hopsim.platforms.load("two-nodes").replace(nodes=4)
    doc = json.loads(hopsim.simulate(p, "exchange", ranks=4, sizes=[0, 8], repetitions=3).to_json())
    check_top(doc, "exchange", 4)
    assert list(doc["results"]) == ["rows"]
    for row in doc["results"]["rows"]:
        assert set(row) == {"bytes", "repetitions", "t_min_us", "t_max_us", "t_avg_us",
                            "mbytes_per_sec"}
        assert row["t_min_us"] <= row["t_avg_us"] <= row["t_max_us"]


def test_roundtrip_schema_and_per_rank_lists():
    r = hopsim.simulate("two-nodes", "roundtrip", ranks=2, exchanges=20, seed=3)
    doc = json.loads(r.to_json())
    check_top(doc, "roundtrip", 2)
    res = doc["results"]
    assert set(res) == set(ROUNDTRIP) | ROUNDTRIP_SCALARS
    for key, stats in ROUNDTRIP.items():
        assert set(res[key]) == stats
    assert res["rtt_us"]["min"] <= res["rtt_us"]["p50"] <= res["rtt_us"]["p99"] <= res["rtt_us"]["max"]
    assert doc["messages"] == 2 * 2 * 20  # a request and a reply per round trip
    for key in ("lc_mode_us", "lc_mean_us", "ray_mode_us", "ray_mean_us", "round_trips"):
        assert len(r.per_rank[key]) == 2
    assert r.per_rank["round_trips"] == [20, 20]
    # The workload's parameters travel with the result, so that validate can replay it.
    assert doc["parameters"] == {"request_bytes": 4000, "reply_bytes": 4000, "exchanges": 20,
                                 "destinations": doc["parameters"]["destinations"],
                                 "overlay": "", "degree": 0, "reception": "any-source",
                                 "transport": "flow", "placement": "block"}


def test_routed_roundtrip_adds_hops_and_relays():
    p = hopsim.platforms.load("two-nodes").replace(nodes=16)
    r = hopsim.simulate(p, "roundtrip", ranks=16, exchanges=10, overlay="debruijn", degree=2)
    res = r.results
    assert set(res["hops"]) == {"mean"} and set(res["relays"]) == {"mean", "sd", "max"}
    assert 1 <= res["hops"]["mean"] <= 4  # B(2,4): at most 4 hops
    assert res["relays"]["max"] >= res["relays"]["mean"] > 0


def test_engine_rejections_become_input_errors():
    p = hopsim.platforms.load("two-nodes").replace(nodes=10)
    with pytest.raises(hopsim.InputError, match="kautz"):
        hopsim.simulate(p, "roundtrip", ranks=10, exchanges=1, overlay="kautz", degree=7)


def test_a_networkx_graph_routes_the_roundtrip():
    import networkx as nx

    p = hopsim.platforms.load("two-nodes").replace(nodes=8)
    ring = hopsim.simulate(p, "roundtrip", ranks=8, exchanges=50, overlay=nx.cycle_graph(8))
    complete = hopsim.simulate(p, "roundtrip", ranks=8, exchanges=50, overlay="complete")
    assert ring.parameters["overlay"] == "user"
    assert complete.results["hops"]["mean"] == 1 and complete.results["relays"]["max"] == 0
    # A ring of 8 is up to 4 hops; relaying makes its round trips longer.
    assert 1 < ring.results["hops"]["mean"] <= 4 and ring.results["relays"]["mean"] > 0
    assert ring.results["rtt_us"]["mean"] > complete.results["rtt_us"]["mean"]
