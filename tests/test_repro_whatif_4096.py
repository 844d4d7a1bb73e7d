"""The whatif-4096 reproduction (scenarios/reproductions/whatif_4096.py): which presets
and overlays it runs, its tables on the --quick size, and the mechanisms behind the
winners, each against values worked out by hand."""
from __future__ import annotations

import subprocess
import sys

import pytest

from hopsim import platforms
from hopsim.scenarios.reproductions import _ray_network_test as rnt
from hopsim.scenarios.reproductions import whatif_4096 as wi
from hopsim.scenarios.study import Study


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    s = Study(wi.NAME, wi.TITLE, tmp_path_factory.mktemp("wi") / "out", seed=1, quick=True)
    wi.run(s)
    return s


def _rows(study, key):
    t = study.tables[key]
    return [dict(zip(t["columns"], r)) for r in t["rows"]]


def test_every_cloud_and_cluster_preset_but_the_analytic_one():
    names = wi.presets()
    assert names == [p for p in platforms.list_presets() if p != "two-nodes"]
    assert {"ec2-10gbe", "qdr-ib", "qlogic-ib"} <= set(names)
    assert sum(p.startswith("gce-") for p in names) == 7
    assert set(wi.presets(quick=True)) == set(wi.QUICK_PRESETS)


def test_the_full_size_cases():
    s = Study(wi.NAME, wi.TITLE, "unused", quick=False)
    cs = wi.cases(s)
    # 4 overlays x 2 receptions per preset.
    assert len(cs) == 8 * len(wi.presets())
    qdr = [c for c in cs if c.platform.name == "qdr-ib" and c.reception == "round-robin"]
    # K(63, 2) = 64 * 63 = 4032 ranks; the others 4096; 16 per node: 252 and 256 nodes.
    assert [(c.overlay, c.ranks, c.nodes) for c in qdr] == [
        ("complete", 4096, 256), ("kautz", 4032, 252), ("debruijn", 4096, 256),
        ("random", 4096, 256)]
    # qlogic-ib: 12 cores per node; 4096 = 341 x 12 + 4, so a 342nd node with 4 ranks.
    ql = next(c for c in cs if c.platform.name == "qlogic-ib" and c.overlay == "complete")
    assert ql.nodes == 342 and ql.placement.count(341) == 4 and ql.placement.count(0) == 12
    # GCE n1-standard-1: one core per instance, one rank per node: 4096 nodes.
    g = next(c for c in cs if c.platform.name == "gce-n1-standard-1")
    assert (g.per_node, g.nodes) == (1, 4096)


def test_tables_columns_and_one_row_per_run(quick):
    assert list(quick.tables) == ["overlays", "winners"]
    assert list(quick.figures) == ["overlays"]
    rows = _rows(quick, "overlays")
    assert len(rows) == 8 * len(wi.QUICK_PRESETS)
    assert quick.tables["overlays"]["columns"][:8] == [
        "platform", "reception", "overlay", "ranks", "nodes", "ranks per node", "mean us",
        "p99 us"]
    assert {r["overlay"] for r in rows} == {"complete graph", "Kautz K(7, 2)",
                                           "de Bruijn B(2, 6)", "random graph (mean degree 6)"}
    assert set(quick.platforms) == set(wi.QUICK_PRESETS)


def test_places_rank_the_means_and_the_winner_is_place_one(quick):
    rows = _rows(quick, "overlays")
    winners = {(w["platform"], w["reception"]): w for w in _rows(quick, "winners")}
    for key in winners:
        group = sorted((r for r in rows if (r["platform"], r["reception"]) == key),
                       key=lambda r: r["mean us"])
        assert [r["place (1 = fastest)"] for r in group] == [1, 2, 3, 4]
        assert winners[key]["fastest"] == group[0]["overlay"]
        assert winners[key]["runner-up / fastest"] == pytest.approx(
            group[1]["mean us"] / group[0]["mean us"])


def test_per_hop_cost_and_the_complete_graph(quick):
    for r in _rows(quick, "overlays"):
        assert r["us per hop"] == pytest.approx(r["mean us"] / (2 * r["mean hops"]))
        if r["overlay"] == "complete graph":
            assert (r["mean hops"], r["relays per rank mean"], r["relays per rank max"]) == (1, 0, 0)
            assert r["connections per rank"] == r["ranks"] == 64
            assert r["speed-up over complete"] == 1


def test_mechanisms(quick):
    rows = {(r["platform"], r["reception"], r["overlay"]): r for r in _rows(quick, "overlays")}
    # ec2-10gbe has no pass cost: a turn of the round-robin list takes no time, so the
    # complete graph's round trip is the same under either policy.
    assert rows[("ec2-10gbe", "round-robin", "complete graph")]["mean us"] == \
        rows[("ec2-10gbe", "any-source", "complete graph")]["mean us"]
    # With no pass cost a hop costs about one latency (114.242 us) plus the 4000-byte
    # request's time on 10 Gbit/s (3.2 us) shared between request and empty reply: within
    # 5% of 114.242 + 1.6 for every overlay.
    for (p, _, _), r in rows.items():
        if p == "ec2-10gbe":
            assert r["us per hop"] == pytest.approx(114.242 + 1.6, rel=0.05)
    # qdr-ib round-robin: 64 connections x 1.04 us per pass make the complete graph's hop
    # the dearest; Kautz K(7, 2) keeps 8 and wins.
    rr = {o: r for (p, rec, o), r in rows.items() if (p, rec) == ("qdr-ib", "round-robin")}
    assert rr["Kautz K(7, 2)"]["mean us"] < rr["complete graph"]["mean us"]
    # A hop there is the latency plus about half a turn of the 64-entry list:
    # 6.9084 + 64 x 1.03919 / 2 = 40.2 us (the wire and the pass's own cost come on top).
    assert rr["complete graph"]["us per hop"] == pytest.approx(6.9084 + 64 * 1.03919 / 2,
                                                               rel=0.15)


def test_the_command_line_writes_the_report_with_the_same_numbers(tmp_path, quick):
    p = subprocess.run([sys.executable, "-m", "hopsim", "run", "whatif-4096", "--quick",
                        "--out", tmp_path / "o"], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in (tmp_path / "o").iterdir()) == [
        "overlays.csv", "overlays.png", "report.html", "results.json", "winners.csv"]
    assert "runner-up" in p.stdout
    # Another process, the same seed: the same bytes.
    assert (tmp_path / "o" / "overlays.csv").read_text() == quick.files()["overlays.csv"]


def test_seed_changes_the_random_graph_and_destinations():
    qdr = platforms.load("qdr-ib")
    a = rnt.run_case(rnt.Case(qdr, 64, 16, "random", "round-robin", 5, seed=1))
    b = rnt.run_case(rnt.Case(qdr, 64, 16, "random", "round-robin", 5, seed=1))
    c = rnt.run_case(rnt.Case(qdr, 64, 16, "random", "round-robin", 5, seed=2))
    assert a["results"] == b["results"] and a["messages"] == b["messages"]
    assert a["results"] != c["results"]
