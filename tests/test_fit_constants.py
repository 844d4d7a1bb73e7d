"""Fits whose expected values are worked out by hand, so that a changed constant or
estimator in hopsim.calibration.fit shows (the noise's sigma, the per-byte host cost)."""
import json
import math
import re

import pytest

import hopsim
from hopsim.calibration.calibrate import calibrate_files
from hopsim.platforms import Platform

SIZES = [0, 1024, 65536, 1048576]


def _trial(tmp_path, platform, name, extra_us):
    r = json.loads(hopsim.simulate(platform, "pingpong", ranks=2, sizes=SIZES, iterations=5).to_json())
    for row in r["results"]["rows"]:
        row["latency_us"] += extra_us
    path = tmp_path / name
    path.write_text(json.dumps(r) + "\n")
    return str(path)


def test_noise_sigma_is_the_sd_of_the_log_offsets(tmp_path):
    # Three trials of one case, the second 1 us and the third e^4 = 54.598 us slower at
    # every size than the first. Offsets over the fastest: 0, 1, e^4; the nonzero ones'
    # logarithms are 0 and 4: mean 2, SD 2 (variance 4). Lognormal: median e^2 = 7.389 us,
    # sigma 2.
    truth = Platform(name="t", nodes=2, cores=1, latency_us=20.0, bandwidth_gbps=1.0)
    files = [_trial(tmp_path, truth, f"trial{i}.json", extra)
             for i, extra in enumerate((0.0, 1.0, math.exp(4)))]
    r = calibrate_files(files, base=truth, ranks_per_node=1)
    fitted = {f.key: f.value for f in r.fit.fitted}
    assert fitted["noise.sigma"] == pytest.approx(2.0, rel=1e-4)
    assert fitted["noise.median_us"] == pytest.approx(math.exp(2), rel=1e-4)


def test_per_byte_host_cost_is_paid_by_sender_and_receiver(tmp_path):
    # 1 ns per byte at each end: 2e-3 us per byte on top of the wire's 8e-3 us per byte at
    # 1 Gbit/s. Given the per-byte cost (--base), the fit must attribute only the wire's
    # part to the bandwidth: 1 Gbit/s, and 20 us latency. Counting the host's part once
    # (1e-3 us/byte) would leave 9e-3 us/byte for the wire: 0.889 Gbit/s.
    truth = Platform(name="t", nodes=2, cores=1, latency_us=20.0, bandwidth_gbps=1.0,
                     per_byte_overhead_ns=1.0)
    path = _trial(tmp_path, truth, "pp.json", 0.0)
    r = calibrate_files([path], base=truth.replace(latency_us=1.0, bandwidth_gbps=5.0),
                        ranks_per_node=1)
    assert r.fit.platform.bandwidth_gbps == pytest.approx(1.0, rel=1e-3)
    assert r.fit.platform.latency_us == pytest.approx(20.0, rel=1e-3)


def test_two_sizes_are_enough_for_a_line(tmp_path):
    # t(0) = 20 us and t(10^6 B) = 20 + 8 x 10^6 / (1 Gbit/s = 1000 bit/us) = 8020 us: two
    # sizes give exactly L = 20 us and B = 1 Gbit/s.
    truth = Platform(name="truth", nodes=2, cores=1, latency_us=20.0, bandwidth_gbps=1.0)
    path = tmp_path / "pp.json"
    r = hopsim.simulate(truth, "pingpong", ranks=2, sizes=[0, 1000000], iterations=2)
    assert [row["latency_us"] for row in r.results["rows"]] == pytest.approx([20.0, 8020.0])
    path.write_text(r.to_json() + "\n")
    p = calibrate_files([str(path)], ranks_per_node=1).fit.platform
    assert p.latency_us == pytest.approx(20.0, rel=1e-4)
    assert p.bandwidth_gbps == pytest.approx(1.0, rel=1e-4)


def test_a_slope_under_a_tenth_of_the_time_is_no_rate():
    from hopsim.calibration.fit import is_bandwidth
    from hopsim.calibration.segments import Segment

    # 20 us + 1 ns/B up to 1000 B: 1 us of serialisation in 21 us (under a tenth).
    assert not is_bandwidth(Segment(0, 1000, 20.0, 0.001, 0.0, 4))
    # The same up to 10^5 B: 100 us of 120 us.
    assert is_bandwidth(Segment(0, 100000, 20.0, 0.001, 0.0, 4))


def test_a_latency_solved_from_round_trips_reports_its_own_miss(tmp_path):
    # Without a ping-pong the round trips set the latency (Brent's method over the
    # engine); the provenance gives the simulated figure and its miss, under 1% (the
    # round trips are whole microseconds, so the solve lands on a step near the target).
    from hopsim.formats import latency_checker

    truth = Platform(name="truth", nodes=4, cores=1, latency_us=20.0, bandwidth_gbps=1.0)
    rt = hopsim.simulate(truth, "roundtrip", ranks=4, exchanges=200, destinations="shared",
                         reception="any-source")
    lc = tmp_path / "lc.txt"
    lc.write_text(latency_checker(rt))
    r = calibrate_files([str(lc)], base=truth.replace(latency_us=1.0), ranks_per_node=1)
    # Near the truth's 20 us (the fit simulates fewer round trips than the file holds).
    assert 19.0 < r.fit.platform.latency_us < 21.0
    prov = r.fit.platform.provenance["network.latency_us"]
    miss = re.search(r"; simulated \S+ us \(([-+][0-9.]+)%\)$", prov)
    assert miss and abs(float(miss[1])) < 1.0, prov


def test_below_a_protocol_break_with_no_rate_above_it_the_line_takes_every_smaller_size(tmp_path):
    # 20 us, 400 Gbit/s (1024 B in 0.0205 us), rendezvous above 16 KiB (+40 us): above the
    # break, 64 KiB adds 1.3 us to 61 us, no measurable rate, so L and B come from a line
    # over the six sizes 0..16384 B below the break: 20 us and 400 Gbit/s.
    truth = Platform(name="t", nodes=2, cores=1, latency_us=20.0, bandwidth_gbps=400.0,
                     eager_threshold_bytes=16384)
    r = hopsim.simulate(truth, "pingpong", ranks=2, iterations=2,
                        sizes=[0, 1024, 2048, 4096, 8192, 16384, 24576, 32768, 49152, 65536])
    path = tmp_path / "pp.json"
    path.write_text(r.to_json() + "\n")
    p = calibrate_files([str(path)], ranks_per_node=1).fit.platform
    assert p.eager_threshold_bytes == 16384
    assert p.latency_us == pytest.approx(20.0, rel=1e-3)
    assert p.bandwidth_gbps == pytest.approx(400.0, rel=0.01)
    assert "one line over the sizes up to 16384 B (below the modelled break)" in \
        p.provenance["network.latency_us"] and "6 rows" in p.provenance["network.latency_us"]


def _paced_curve(sizes, b=None, r=None):
    # One packet (up to 1024 B) at L + s/R, L = 20 us, R = 10 Gbit/s; above it paced at
    # p = 0.1 Gbit/s (L + s/p); with a bucket of b bytes at r, L + (s - b)/r once slower.
    out = []
    for s in sizes:
        t = 20.0 + 8e-3 * s / (10.0 if s <= 1024 else 0.1)
        if b is not None and s > 1024:
            t = max(t, 20.0 + 8e-3 * (s - b) / r)
        out.append(t)
    return out


def test_the_pacing_fit_recovers_a_paced_curve_and_its_bucket():
    from hopsim.calibration.fit_pacing import fit_pacing

    sizes = [0, 64, 256, 1024, 4096, 8192, 16384, 32768, 65536, 131072]
    fit, why = fit_pacing(sizes, _paced_curve(sizes))
    assert why == "" and fit.bucket_gbps is None
    assert (fit.latency_us, fit.line_gbps, fit.paced_gbps) == pytest.approx((20.0, 10.0, 0.1))
    assert (fit.above_bytes, fit.first_paced) == (1024, 4096)
    assert fit.lower == [0, 64, 256, 1024] and fit.upper == sizes[4:]
    # A bucket of 100000 B at 0.05 Gbit/s: the paced line L + s/p meets L + (s - b)/r at
    # s* = b / (1 - r/p) = 100000 / 0.5 = 200000 B.
    sizes += [262144, 524288, 1048576]
    fit, why = fit_pacing(sizes, _paced_curve(sizes, b=100000, r=0.05))
    assert why == "" and fit.paced_gbps == pytest.approx(0.1)
    assert fit.bucket_gbps == pytest.approx(0.05) and fit.burst_bytes == pytest.approx(100000)
    assert fit.crossing == pytest.approx(200000)
