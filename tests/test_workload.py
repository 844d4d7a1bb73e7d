"""Workload parameters and placement: every rejection names the parameter."""
import re
from pathlib import Path

import networkx as nx
import pytest

from hopsim import InputError, make_workload, platforms, prepare
from hopsim.workload import TOOL_SIZES

SPEC_HPP = Path(__file__).resolve().parents[1] / "simulator" / "spec.hpp"


def spec_fields(struct: str) -> list[str]:
    body = re.search(rf"struct {struct} {{(.*?)\n}};", SPEC_HPP.read_text(), re.S).group(1)
    return re.findall(r"^\s+[\w:<>, ]+?\s(\w+)\s*[=;]", body, re.M)


def cluster(nodes=4, cores=2) -> platforms.Platform:
    return platforms.load("two-nodes").replace(nodes=nodes, cores=cores)


def test_engine_dict_has_exactly_the_fields_of_WorkloadSpec():
    w = make_workload("roundtrip", 8, 2, seed=7, request_bytes=4000, reply_bytes=0)
    spec = w.to_engine_dict()
    assert sorted(spec) == sorted(spec_fields("WorkloadSpec"))
    assert (spec["ranks"], spec["ranks_per_node"], spec["seed"], spec["reply_bytes"]) == (8, 2, 7, 0)


def test_tool_defaults():
    assert make_workload("pingpong", 2).sizes == TOOL_SIZES
    assert TOOL_SIZES[0] == 0 and TOOL_SIZES[-1] == 4 * 1024 * 1024
    assert make_workload("exchange", 4).sizes == TOOL_SIZES
    rt = make_workload("roundtrip", 4)
    assert (rt.request_bytes, rt.reply_bytes, rt.exchanges, rt.destinations, rt.overlay) == \
        (4000, 4000, 1000, "independent", "")


@pytest.mark.parametrize("kind, ranks, rpn, params, fragment", [
    ("roundtrip", 6, 4, {}, "ranks: 6 ranks are not divisible by ranks_per_node 4"),
    ("roundtrip", 0, 1, {}, "ranks: must be at least 1"),
    ("roundtrip", 4, 0, {}, "ranks_per_node: must be at least 1"),
    ("roundtrip", 4.0, 1, {}, "ranks: must be an integer"),
    ("pingpong", 3, 1, {}, "exactly 2 ranks"),
    ("alltoallv", 2, 1, {}, "workload: must be one of pingpong, roundtrip, exchange"),
    ("pingpong", 2, 1, {"request_bytes": 8}, "request_bytes: does not apply to the pingpong"),
    ("exchange", 4, 1, {"exchanges": 8}, "exchanges: does not apply to the exchange"),
    ("roundtrip", 4, 1, {"sizes": [1]}, "sizes: does not apply to the roundtrip"),
    ("roundtrip", 4, 1, {"colour": 1}, "unknown parameter 'colour'"),
    ("roundtrip", 4, 1, {"request_bytes": -1}, "request_bytes: must be at least 0"),
    ("roundtrip", 4, 1, {"reply_bytes": "4k"}, "reply_bytes: must be an integer"),
    ("roundtrip", 4, 1, {"exchanges": 0}, "exchanges: must be at least 1"),
    ("roundtrip", 4, 1, {"destinations": "random"}, "destinations: must be one of"),
    ("roundtrip", 4, 1, {"overlay": "ring"}, "overlay: must be one of"),
    ("roundtrip", 4, 1, {"degree": 2}, "degree: only applies with an overlay"),
    ("roundtrip", 4, 1, {"overlay": "debruijn", "degree": -2}, "degree: must be at least 0"),
    ("pingpong", 2, 1, {"sizes": []}, "sizes: must not be empty"),
    ("pingpong", 2, 1, {"sizes": [0, -4]}, "sizes: must be at least 0"),
    ("pingpong", 2, 1, {"sizes": "1024"}, "sizes: must be a list"),
    ("pingpong", 2, 1, {"iterations": -1}, "iterations: must be at least 0"),
    ("pingpong", 2, 1, {"warmup": -1}, "warmup: must be at least 0"),
    ("roundtrip", 2, 1, {"warmup": 5}, "warmup: does not apply to the roundtrip workload"),
    ("exchange", 4, 1, {"repetitions": -1}, "repetitions: must be at least 0"),
])
def test_bad_parameters_are_named(kind, ranks, rpn, params, fragment):
    with pytest.raises(InputError, match=re.escape(fragment)):
        make_workload(kind, ranks, rpn, **params)


@pytest.mark.parametrize("seed", [-1, 2**64, True])
def test_seed_range(seed):
    with pytest.raises(InputError, match="seed"):
        make_workload("roundtrip", 2, seed=seed)


@pytest.mark.parametrize("ranks, rpn, fragment", [
    (10, 1, "ranks: 10 ranks exceed the 8 cores of platform two-nodes (4 nodes x 2 cores)"),
    (6, 3, "ranks_per_node: 3 ranks per node exceed the cores of platform two-nodes"),
    (6, 1, "ranks: 6 ranks at 1 per node need 6 nodes"),
])
def test_placement_must_fit_the_platform(ranks, rpn, fragment):
    with pytest.raises(InputError, match=re.escape(fragment)):
        prepare(cluster(), "roundtrip", ranks=ranks, ranks_per_node=rpn)


def test_placement_that_fits():
    _, work, spec = prepare(cluster(), "roundtrip", ranks=8, ranks_per_node=2)
    assert work.nodes_used == 4 and spec["nodes"] == 4


def test_reception_overrides_the_platform_and_is_checked():
    _, _, spec = prepare("two-nodes", "roundtrip", ranks=2, reception="round-robin")
    assert spec["reception"] == "round-robin"
    with pytest.raises(InputError, match="reception: must be one of"):
        prepare("two-nodes", "roundtrip", ranks=2, reception="lifo")


def test_a_networkx_graph_becomes_user_arcs():
    g = nx.cycle_graph(4)
    w = make_workload("roundtrip", 4, overlay=g)
    assert w.overlay == "user"
    assert set(w.overlay_arcs) == {(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2), (3, 0), (0, 3)}
    d = make_workload("roundtrip", 3, overlay=nx.DiGraph([(0, 1), (1, 2), (2, 0)]))
    assert d.to_engine_dict()["overlay_arcs"] == [[0, 1], [1, 2], [2, 0]]


def test_a_graph_must_cover_exactly_the_ranks_and_connect_them():
    with pytest.raises(InputError, match="the graph has 4 nodes but the run has 5 ranks"):
        make_workload("roundtrip", 5, overlay=nx.cycle_graph(4))
    with pytest.raises(InputError, match="overlay: "):
        make_workload("roundtrip", 4, overlay=nx.DiGraph([(0, 1), (1, 2), (2, 3)]))
    with pytest.raises(InputError, match="overlay: expected a family name or a networkx graph"):
        make_workload("roundtrip", 4, overlay=42)


def test_a_user_graphs_degree_is_its_mean_out_degree_rounded_half_up():
    # 4 ranks: a directed 4-cycle (4 arcs) plus chords. 10 arcs: mean 2.5, half up -> 3
    # (rounding down or to even would give 2). 9 arcs: 2.25 -> 2. 11 arcs: 2.75 -> 3.
    cycle = [(0, 1), (1, 2), (2, 3), (3, 0)]
    chords = [(0, 2), (2, 0), (1, 3), (3, 1), (0, 3), (1, 0), (2, 1)]
    for extra, degree in ((6, 3), (5, 2), (7, 3)):
        arcs = cycle + chords[:extra]
        w = make_workload("roundtrip", 4, overlay=nx.DiGraph(arcs))
        assert len(w.overlay_arcs) == len(arcs)
        assert w.overlay_built()["degree"] == degree, (len(arcs), w.overlay_built())
