"""hopsim advise: the candidates it tries, the rule it recommends by, and its contract."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hopsim.topologies.advise import TIE, candidates, recommend


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
