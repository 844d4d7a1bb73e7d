"""Pacing (docs/model.md, "Pacing"): the engine's closed forms live in
tests/cpp/test_model.cpp; here the fitter inverts the engine, finds the step on a real
ping-pong through tbf, and the fit predicts a round trip it never saw."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import hopsim
from hopsim.calibration.calibrate import calibrate_files
from hopsim.calibration.fit_pacing import fit_pacing
from hopsim.platforms.simgrid import simgrid_texts
from hopsim.calibration.validate import validate
from hopsim.errors import InputError
from hopsim.platforms import Platform

DATA = Path(__file__).parent / "data"
LIVE_PP = DATA / "live" / "pingpong-2x200mbit-quiet" / "result.json"
LIVE_RT = DATA / "live" / "roundtrip-4x200mbit-4ranks-quiet" / "result.json"
SIZES = [0, 64, 1024] + sorted({2**k for k in range(12, 21)} | {3 * 2**k for k in range(11, 19)})
TRUTH = Platform(name="t", nodes=4, cores=2, latency_us=5.6, bandwidth_gbps=9.0,
                 pacing_gbps=0.38, pacing_above_bytes=1024, bucket_gbps=0.19,
                 bucket_burst_bytes=240000)


def _fitted(files, **kw):
    r = calibrate_files([str(f) for f in files], ranks_per_node=1, **kw)
    return r, {f.key: f.value for f in r.fit.fitted}


def test_pacing_and_bucket_are_recovered_from_the_engines_own_ping_pong(tmp_path):
    res = hopsim.simulate(TRUTH, workload="pingpong", ranks=2, sizes=SIZES, iterations=5)
    f = tmp_path / "pp.json"
    f.write_text(res.to_json())
    _, fitted = _fitted([f])
    assert fitted["network.pacing_above_bytes"] == 1024
    assert fitted["network.pacing_gbps"] == pytest.approx(0.38, rel=1e-3)
    assert fitted["network.latency_us"] == pytest.approx(5.6, rel=1e-3)
    assert fitted["network.bandwidth_gbps"] == pytest.approx(9.0, rel=1e-3)
    assert fitted["network.bucket_gbps"] == pytest.approx(0.19, rel=1e-3)
    assert fitted["network.bucket_burst_bytes"] == pytest.approx(240000, rel=2e-2)


def test_a_curve_without_a_step_is_not_paced(tmp_path):
    # A bucket behind a line twice its rate: the ping-pong bends once, at the burst.
    # (Behind a 9 Gbit/s line the ping-pong would drain it within a few tens of kB and
    # step up much as pacing does: that curve is not this test's.)
    plain = TRUTH.replace(pacing_gbps=0.0, pacing_above_bytes=0, bandwidth_gbps=0.4)
    res = hopsim.simulate(plain, workload="pingpong", ranks=2, sizes=SIZES, iterations=5)
    f = tmp_path / "pp.json"
    f.write_text(res.to_json())
    r, fitted = _fitted([f])
    assert "network.pacing_gbps" not in fitted
    assert dict(r.fit.skipped)["pacing"].startswith("no step after the small sizes")
    assert "network.bucket_gbps" in fitted   # TokenBucket's, from the bend


def test_the_step_needs_a_rate_drop_not_only_a_jump():
    # A rendezvous handshake: +40 us from 65536 B on, the same 10 Gbit/s on both sides.
    sizes = [0, 1024, 4096, 16384, 65536, 131072, 262144, 524288]
    times = [5 + s * 8e-3 / 10 + (40 if s >= 65536 else 0) for s in sizes]
    fit, why = fit_pacing(sizes, times)
    assert fit is None and "no step" in why


def test_the_live_ping_pong_through_tbf_shows_pacing_and_the_configured_bucket():
    # The emulated hosts' links: tbf rate 200mbit, burst 250000 B (hopsim.cmd). One
    # packet crosses in ~6 us; longer messages climb at about twice the tbf rate.
    r, fitted = _fitted([LIVE_PP])
    assert fitted["network.pacing_above_bytes"] == 1024   # the step lies before 4096
    assert 0.35 <= fitted["network.pacing_gbps"] <= 0.42
    assert fitted["network.bandwidth_gbps"] > 10 * fitted["network.pacing_gbps"]
    assert 0.17 <= fitted["network.bucket_gbps"] <= 0.2     # 200 Mbit/s less framing
    assert 200000 <= fitted["network.bucket_burst_bytes"] <= 280000
    big = [s for s in r.simulated if s >= 6144]
    worst = max(abs(r.simulated[s] - pt.value) / pt.value for s in big
                for pt in r.fit.data.pingpong if pt.size == s)
    assert worst < 0.05


def test_the_ping_pong_fit_predicts_an_unseen_round_trip_within_ten_percent(tmp_path):
    r, _ = _fitted([LIVE_PP], nodes=4)
    plat = tmp_path / "fit.toml"
    plat.write_text(r.toml)
    report = validate(str(plat), [str(LIVE_RT)], nodes=4)
    (case,) = report.cases
    assert case.workload == "roundtrip" and case.ranks == 4
    assert abs(case.error_pct) < 10, report.table()
    # The paced rate as the link's instead: the requests converging on one rank queue.
    p = r.fit.platform
    link = p.replace(pacing_gbps=0.0, pacing_above_bytes=0, bandwidth_gbps=p.pacing_gbps)
    (slow,) = validate(link, [str(LIVE_RT)], nodes=4).cases
    assert slow.error_pct > case.error_pct + 10


def test_pacing_above_needs_a_pacing_rate():
    with pytest.raises(InputError, match="pacing_above_bytes.*needs network.pacing_gbps"):
        TRUTH.replace(pacing_gbps=0.0)


def test_smpi_flags_bound_each_flow_at_the_paced_rate_then_the_sustained_one():
    _, flags = simgrid_texts(TRUTH)
    cfg = dict(l.removeprefix("--cfg=").split(":", 1) for l in flags.split())
    # gamma / (2 L) = p: 2 x 5.6e-6 s x 0.38e9/8 B/s.
    assert float(cfg["network/TCP-gamma"]) == pytest.approx(2 * 5.6e-6 * 0.38e9 / 8)
    steps = [tuple(float(x) for x in part.split(":")) for part in cfg["smpi/bw-factor"].split(";")]
    crossing = 240000 / (1 - 0.19 / 0.38)
    assert steps == [(0, 1.0), (int(crossing) + 1, pytest.approx(0.19 / 0.38))]


# Three real lines of the demonstration's NetPIPE 3.7 file (docs/validation/fit-netpipe-live/np.out).
NP_LINES = """\
     381 310.486756   0.00000936
     509 326.425916   0.00001190
     765 343.195703   0.00001701
"""


def test_netpipe_37_repetitions_follow_its_rule():
    rows = [m for m in hopsim.calibration.parsers.parse_text(NP_LINES, "np.out")
            if m.statistic == "latency_us"]
    # 3 trials x RUNTM / the previous line's time (the first: its own).
    assert [m.repetitions for m in rows] == [3 * int(0.25 / 9.36e-6), 3 * int(0.25 / 9.36e-6),
                                             3 * int(0.25 / 11.90e-6)]


def test_a_bucket_platform_replays_the_tools_own_count(tmp_path, monkeypatch):
    # NetPIPE's thousands of round trips drain the tbf's bucket once a message exceeds
    # what a round trip refills (2 r t, ~280 B here); 200 iterations from a full bucket
    # would not, and 509 B would come out at the one-packet time (~6 us, -50%).
    f = tmp_path / "np.out"
    f.write_text(NP_LINES)
    plat = DATA.parent.parent / "docs" / "validation" / "fit-hopbench.toml"
    full = {c.bytes: c for c in validate(str(plat), [str(f)], nodes=4).cases}
    assert full[509].run["iterations"] == min(full[509].measured_repetitions, 30000)
    assert abs(full[509].error_pct) < 15 and abs(full[765].error_pct) < 10
    monkeypatch.setattr("hopsim.calibration.validate.MAX_STATEFUL_ITERATIONS", 200)
    capped = {c.bytes: c for c in validate(str(plat), [str(f)], nodes=4).cases}
    assert capped[509].error_pct < -40


def test_the_ping_pong_fit_predicts_the_real_latency_checker():
    # latency_checker itself (built from its source), 3 trials at 2, 4 and 8 ranks on the
    # emulated cluster, replayed on the demonstration's ping-pong fit (docs/validation.md).
    plat = DATA.parent.parent / "docs" / "validation" / "fit-hopbench.toml"
    files = sorted(str(f) for f in (DATA / "live").glob("latency_checker-*/result.json"))
    report = validate(str(plat), files, nodes=4)
    assert len(report.cases) == 9
    assert report.median_abs_error_pct < 10, report.table()
