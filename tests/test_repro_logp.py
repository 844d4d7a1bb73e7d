"""The logp-sensitivity reproduction (scenarios/reproductions/logp_sensitivity.py): the
LogGP -> platform-key mapping, slowdown slopes on the two-nodes preset against counts made
by hand, the line fit on crafted points, and the CLI run's tables and determinism."""
from __future__ import annotations

import csv
import subprocess
import sys
from types import SimpleNamespace

import pytest

from hopsim import platforms
from hopsim.scenarios.reproductions import logp_sensitivity as logp
from test_report_browser import CHROMIUM, _probe  # the headless-chromium probe

TWO = platforms.load("two-nodes")    # 10 us, 1 Gbit/s = 125 bytes/us, no host costs


def _hopsim(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_each_parameter_moves_its_own_keys():
    o = logp.vary(TWO, "o", 7)
    assert (o.send_overhead_us, o.recv_overhead_us, o.gap_us, o.latency_us) == (7, 7, 0, 10)
    assert logp.vary(TWO, "g", 7).gap_us == 7
    assert logp.vary(TWO, "L", 7).latency_us == 17
    # G0 = 8 / 1000 us per byte at 1 Gbit/s; +100 us on 4000 B is +0.025 us per byte:
    # 0.033 us per byte is 8 / (1000 x 0.033) = 0.24242 Gbit/s.
    g = logp.vary(TWO, "G", 100)
    assert g.bandwidth_gbps == pytest.approx(0.2424242424)
    assert logp.per_byte_gap_us(g) == pytest.approx(0.033)
    with pytest.raises(ValueError):
        logp.vary(TWO, "x", 1)


def _slowdown_fit(workload, parameter, added, ranks, transport):
    study = SimpleNamespace(seed=1)
    times = logp.sweep(study, TWO, workload, ranks, added, exchanges=10, repetitions=10,
                       transport=transport)[parameter]
    return times, logp.fit(added, [t / times[0] for t in times])


@pytest.mark.parametrize("transport", ["queue", "flow"])
def test_round_trip_slopes_are_the_hand_counts(transport):
    # One rank on two-nodes sends to itself: a round trip is 2 (L + s/R) = 2 (10 + 32) = 84
    # us, plus o four times (request sent and received, reply sent and received), L
    # twice, and each message's added per-byte time (s x dG) twice.
    added = (0, 10, 20)
    for parameter, count in (("o", 4), ("L", 2), ("G", 2)):
        times, f = _slowdown_fit("roundtrip", parameter, added, 1, transport)
        assert times == pytest.approx([84 + count * a for a in added]), parameter
        assert f["slope"] == pytest.approx(count / 84), parameter
        assert f["r2"] == pytest.approx(1.0) and f["max_residual_pct"] == pytest.approx(0, abs=1e-6)
        assert logp.is_linear(f)


def test_exchange_times_by_hand():
    # Four single-rank nodes (two-nodes widened, one rank per node as LogP), 4000 B.
    # Baseline L + 2s/R = 74 (both messages leave one NIC). Overhead o >= 42: sends end at
    # o and 2o, the first message is in by o + 42, the second by 2o + 42 <= 3o, two
    # receives: 4o per repetition. Gap 40 (>= s/R = 32): the second send leaves at 40 and
    # is in at 82. Gap 50: the first repetition takes 50 + 42 = 92, each later one 2g = 100
    # (a send every g): (92 + 9 x 100) / 10 = 99.2. L adds once, dG twice (two messages
    # on one NIC).
    study = SimpleNamespace(seed=1)
    t = logp.sweep(study, TWO, "exchange", 4, (0, 40, 50, 100), exchanges=10, repetitions=10)
    assert t["o"][2:] == pytest.approx([200, 400])
    assert t["g"] == pytest.approx([74, 82, 99.2, 194.2])
    assert t["L"] == pytest.approx([74, 114, 124, 174])
    assert t["G"] == pytest.approx([74, 154, 174, 274])
    first, last = logp.step_slopes((0, 40, 50, 100), t["g"])
    assert (first, last) == pytest.approx((8 / 40, 95 / 50))


def test_the_fit_on_crafted_points():
    f = logp.fit([0, 10, 20], [1, 2, 3])
    assert (f["slope"], f["intercept"], f["r2"]) == pytest.approx((0.1, 1, 1))
    assert f["max_residual_pct"] == pytest.approx(0, abs=1e-9)
    # (0,1) (10,1) (20,3): slope 0.1, intercept 2/3, residuals 1/3, -2/3, 1/3 on a span
    # of 2: 33.3%; R^2 = 1 - (2/3) / (8/3) = 0.75.
    f = logp.fit([0, 10, 20], [1, 1, 3])
    assert (f["slope"], f["intercept"], f["r2"]) == pytest.approx((0.1, 2 / 3, 0.75))
    assert f["max_residual_pct"] == pytest.approx(100 / 3)
    assert not logp.is_linear(f)
    assert logp.fit([0, 10], [1, 1])["r2"] == 1.0


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("logp")
    for name, seed in (("a", 5), ("b", 5), ("c", 6)):
        (base / name).mkdir()
        # The same relative --out: the rerun command in results.json names it.
        p = _hopsim("run", "logp-sensitivity", "--quick", "--seed", seed, "--out", "out",
                    cwd=base / name)
        assert p.returncode == 0, p.stderr
    return {name: base / name / "out" for name in "abc"}


def test_quick_tables_have_their_columns(quick_runs):
    slopes = _rows(quick_runs["a"] / "slopes.csv")
    assert slopes[0] == [
        "workload", "ranks", "parameter", "slope (slowdown per us)", "time slope (us per us)",
        "first step (us per us)", "last step (us per us)", "hand count (us per us)",
        "intercept", "R^2", "max residual % of span",
        "linear (R^2 >= 0.99, residual <= 5% of span)", "slowdown at +100 us"]
    cases = {(r[0], r[1], r[2]) for r in slopes[1:]}
    assert cases == {(w, str(n), p) for w in logp.WORKLOADS for n in logp.QUICK_RANKS
                     for p in logp.PARAMETERS}
    mapping = _rows(quick_runs["a"] / "mapping.csv")
    assert [r[0] for r in mapping[1:]] == ["L", "o", "g", "G"]
    assert mapping[2][1] == "host.send_overhead_us + host.recv_overhead_us"
    points = _rows(quick_runs["a"] / "points.csv")
    for r in points[1:]:
        if r[4] == "0":
            assert float(r[7]) == 1.0
    transports = _rows(quick_runs["a"] / "transports.csv")
    assert transports[0][-1] == "queue against flow %"


def test_the_same_seed_gives_the_same_files_and_another_seed_other_round_trips(quick_runs):
    for f in ("slopes.csv", "points.csv", "results.json", "report.html", "slowdowns.png"):
        assert (quick_runs["a"] / f).read_bytes() == (quick_runs["b"] / f).read_bytes(), f
    a, c = _rows(quick_runs["a"] / "points.csv"), _rows(quick_runs["c"] / "points.csv")
    assert [r for r in a if r[0] == "roundtrip"] != [r for r in c if r[0] == "roundtrip"]
    # IMB Exchange draws nothing: the seed leaves it alone.
    assert [r for r in a if r[0] == "exchange"] == [r for r in c if r[0] == "exchange"]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_a_reader_sees_the_mapping_the_slopes_and_the_figure(quick_runs, tmp_path):
    seen = _probe(quick_runs["a"] / "report.html", tmp_path)
    assert seen["title"].startswith("LogGP sensitivity")
    text = seen["text"]
    assert "host.send_overhead_us + host.recv_overhead_us" in text
    assert "time slope (us per us)" in text and "Beside the paper" in text
    assert len(seen["imgs"]) == 1
    img = seen["imgs"][0]
    assert img["complete"] and img["w"] > 0 and img["h"] > 0
    assert seen["fetched"] == []
