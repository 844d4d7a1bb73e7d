"""Fits whose expected values are worked out by hand, so that a changed constant or
estimator in hopsim.calibration.fit shows (the noise's sigma, the per-byte host cost)."""
import json
import math

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
