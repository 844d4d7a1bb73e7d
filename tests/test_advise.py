"""hopsim advise: the candidates it tries, the rule it recommends by, and its contract."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hopsim.topologies.advise import TIE, advise, candidates, recommend, table


def _hopsim(*args):
    return subprocess.run([sys.executable, "-m", "hopsim", *args], capture_output=True, text=True)


def test_candidates_at_256_ranks_are_every_size_that_fits():
    # 256 = 2^8: de Bruijn B(b, D) with b^D = 256 and D >= 2 is b = 16, 4, 2. Kautz needs
    # d^(D-1) (d + 1) = 256, impossible (d and d + 1 would both be powers of two), so its
    # nearest sizes stand in: K(6, 3) = 216 + 36 = 252 below, K(16, 2) = 256 + 16 = 272 above.
    got = {(c.family, c.ranks, c.degree, c.fit) for c in candidates(256)}
    assert {("debruijn", 256, b, "exact") for b in (16, 4, 2)} <= got
    assert not any(f == "debruijn" and b not in (16, 4, 2) for f, _, b, _ in got)
    kautz = {(r, d, fit) for f, r, d, fit in got if f == "kautz"}
    assert kautz == {(252, 6, "nearest below"), (272, 16, "nearest above")}
    assert ("complete", 256, 0, "exact") in got


def test_recommend_prefers_fewer_connections_within_the_tie():
    a = {"label": "a", "ranks": 64, "mean_us": 100.0, "connections_mean": 50.0}
    b = {"label": "b", "ranks": 64, "mean_us": 100.0 * (1 + TIE) - 0.01, "connections_mean": 10.0}
    c = {"label": "c", "ranks": 64, "mean_us": 100.0 * (1 + TIE) + 0.01, "connections_mean": 5.0}
    other_size = {"label": "d", "ranks": 60, "mean_us": 1.0, "connections_mean": 1.0}
    assert recommend([a, b, c, other_size], 64) is b
    assert recommend([a, c], 64) is a
    assert recommend([other_size], 64) is None


@pytest.fixture(scope="module")
def advice16():
    p = _hopsim("advise", "--platform", "qdr-ib", "--ranks", "16", "--ranks-per-node", "16",
                "--reception", "round-robin", "--exchanges", "4", "--jobs", "2", "--json")
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_advise_reports_connections_as_the_round_robin_lists_hold_them(advice16):
    rows = {r["label"]: r for r in json.loads(advice16)["candidates"]}
    # B(2, 4): every rank has two in-neighbours; 0000 and 1111 have a self-loop, so their
    # list (in-neighbours and itself) holds 2, the 14 others 3: (2*2 + 14*3) / 16.
    assert rows["de Bruijn B(2, 4)"]["connections_mean"] == pytest.approx(46 / 16)
    assert rows["de Bruijn B(2, 4)"]["connections_max"] == 3
    # B(4, 2): 4 in-neighbours; the 4 words aa have a self-loop: (4*4 + 12*5) / 16.
    assert rows["de Bruijn B(4, 2)"]["connections_mean"] == pytest.approx(76 / 16)
    complete = rows["complete graph"]
    assert (complete["connections_mean"], complete["hops"], complete["relays_max"]) == (16, 1, 0)


def test_advise_recommends_the_fastest_exact_candidate_or_a_tie(advice16):
    doc = json.loads(advice16)
    rec, rows = doc["recommendation"], doc["candidates"]
    exact = [r for r in rows if r["ranks"] == 16]
    assert rec in exact
    assert rec["mean_us"] <= min(r["mean_us"] for r in exact) * (1 + TIE)
    assert [r["mean_us"] for r in rows] == sorted(r["mean_us"] for r in rows)
    # Kautz fits no 16: its nearest sizes (12, 20) do not fill nodes of 16 and are not run.
    assert {d["ranks"] for d in doc["dropped"] if d["family"] == "kautz"} == {12, 20}


def test_advise_is_deterministic_across_worker_counts(advice16):
    p = _hopsim("advise", "--platform", "qdr-ib", "--ranks", "16", "--ranks-per-node", "16",
                "--reception", "round-robin", "--exchanges", "4", "--jobs", "1", "--json")
    assert p.stdout == advice16


@pytest.mark.parametrize("args,needle", [
    (["--ranks", "1"], "--ranks: must be at least 2"),
    (["--ranks", "16", "--max-connections", "0"], "--max-connections: must be at least 1"),
    (["--ranks", "16", "--ranks-per-node", "16", "--max-connections", "2"],
     "no overlay of exactly 16 ranks keeps at most 2 connections"),
    (["--ranks", "x"], "expected an integer"),
])
def test_advise_refuses_bad_input_in_one_line(args, needle):
    p = _hopsim("advise", "--platform", "qdr-ib", "--exchanges", "2", *args)
    assert p.returncode == 2 and p.stdout == ""
    assert needle in p.stderr and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr


# -- in process: each candidate's platform, the connection bound, the table ----------

def test_each_candidate_runs_on_as_many_nodes_as_its_ranks_fill():
    # two-nodes has 2 single-core nodes: at 1 rank per node a candidate of N ranks needs
    # N nodes, and the platform is widened to them (8 for the 8-rank overlays; Kautz has
    # no 8 and runs its nearest sizes, K(2, 2) = 4 + 2 = 6 and K(3, 2) = 9 + 3 = 12).
    advice = advise("two-nodes", 8, ranks_per_node=1, exchanges=2)
    nodes = {(r["label"], r["ranks"]): r["nodes"] for r in advice["candidates"]}
    assert all(n == ranks for (_, ranks), n in nodes.items()), nodes
    assert {6, 8, 12} <= {ranks for _, ranks in nodes}


@pytest.fixture(scope="module")
def advice16_bounded():
    return advise("qdr-ib", 16, ranks_per_node=16, reception="round-robin", max_connections=3,
                  exchanges=4)


def test_a_candidate_at_exactly_the_connection_bound_is_kept_not_dropped(advice16_bounded):
    # B(2, 4) holds at most 3 connections per rank (see above): a bound of 3 keeps it, and
    # it is then the only exact candidate left, so it is recommended; B(4, 2) (up to 5)
    # is dropped with its count.
    kept = {r["label"] for r in advice16_bounded["candidates"]}
    dropped = {d["label"]: d["reason"] for d in advice16_bounded["dropped"]}
    assert "de Bruijn B(2, 4)" in kept and not kept & set(dropped), (kept, dropped)
    assert advice16_bounded["recommendation"]["label"] == "de Bruijn B(2, 4)"
    assert dropped["de Bruijn B(4, 2)"] == "up to 5 connections per rank, more than 3"


def test_the_table_marks_the_recommendation_and_ends_its_last_line(advice16_bounded):
    text = table(advice16_bounded)
    lines = text.split("\n")
    assert text.endswith(" per rank (the lowest mean round trip)\n") and lines[-1] == ""
    marked = [l for l in lines if l.startswith("* ")]
    assert len(marked) == 1 and marked[0].startswith("* de Bruijn B(2, 4) ")
    assert lines[-2].startswith("recommended: de Bruijn B(2, 4): ")
