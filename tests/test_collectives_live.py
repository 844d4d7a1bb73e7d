"""calibration/collectives_live.py's estimate of the reduction's cost from 2-host IMB
Allreduce and Alltoall files: planted in a platform, the files written by hopsim itself
in IMB's format, the estimate must give the planted value back (and refuse when the
Allreduce shows no cost at all)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from hopsim.calibration.collectives_live import _with, reduce_cost
from hopsim.platforms.platform_file import platform_toml
from hopsim.platforms import Platform


def _files(tmp_path, truth_ns_per_byte):
    truth = tmp_path / "truth.toml"
    truth.write_text(platform_toml(Platform(name="truth", nodes=4, cores=1, latency_us=10.0, bandwidth_gbps=1.0,
                                            reduce_ns_per_byte=truth_ns_per_byte), []))
    for kind in ("allreduce", "alltoall"):
        text = subprocess.run([sys.executable, "-m", "hopsim", "simulate", "--platform", str(truth), "--workload",
                               kind, "--ranks", "2", "--sizes", "65536,1048576", "--repetitions", "2"],
                              capture_output=True, text=True, check=True).stdout
        for t in (1, 2, 3):
            (tmp_path / f"imb-{kind}-2x1-block-t{t}.txt").write_text(text)
    fit = tmp_path / "fit.toml"
    fit.write_text(platform_toml(Platform(name="fit", nodes=4, cores=1, latency_us=10.0, bandwidth_gbps=1.0), []))
    return fit


def test_the_planted_reduction_cost_comes_back(tmp_path):
    # 2 ns/B planted; the fit (no cost) moves the same bytes, so the Allreduce's excess over
    # the Alltoall, beyond what the fit gives, is all reduction: 2 ns/B at every size.
    cost = reduce_cost(_files(tmp_path, 2.0), tmp_path, 3)
    assert cost["used"] and cost["ns_per_byte"] == pytest.approx(2.0, abs=0.01)
    assert set(cost["per_size_and_trial"]) == {"65536", "1048576"}


def test_the_estimates_keep_four_decimals(tmp_path):
    # 1.2374 ns/B planted: the estimates come back within 1.5e-4 of it (the simulated times
    # are rounded); rounded to 3 decimals they would all be 1.237, 4e-4 off.
    cost = reduce_cost(_files(tmp_path, 1.2374), tmp_path, 3)
    estimates = [v for vs in cost["per_size_and_trial"].values() for v in vs]
    assert len(estimates) == 6 and all(abs(v - 1.2374) < 1.5e-4 for v in estimates), estimates
    assert abs(cost["ns_per_byte"] - 1.2374) < 1.5e-4


def test_no_cost_is_not_identified(tmp_path):
    cost = reduce_cost(_files(tmp_path, 0.0), tmp_path, 3)
    assert not cost["used"] and cost["ns_per_byte"] == 0.0 and "not identifiable" in cost["why"]


def test_a_platform_variant_sets_one_key(tmp_path):
    fit = _files(tmp_path, 0.0)
    out = _with(fit, "reduce_ns_per_byte", 1.5, "v.toml")
    assert "reduce_ns_per_byte = 1.5" in out.read_text() and out.name == "v.toml"
    assert out.read_text().replace("reduce_ns_per_byte = 1.5", "reduce_ns_per_byte = 0.0") == fit.read_text()


def test_the_per_size_table_takes_medians_over_trials_on_four_hosts_times_per_host():
    # 4x2 is 8 ranks: the algorithm column is hopsim's choice for 8 ranks (at 64 KiB
    # linear_sync; for 4 to 7 ranks it would be linear).
    from hopsim import _engine
    from hopsim.calibration.collectives_live import per_size_table

    def trial(measured, error):
        return {"per_size": [{"bytes": 65536, "measured_us": measured, "simulated_us": 100.0,
                              "error_pct": error, "simulated_us_no_pass": 90.0,
                              "error_pct_no_pass": error - 10}]}

    files = [dict(trial(m, e), collective="alltoall", layout="4x2")
             for m, e in ((110.0, -9.0), (130.0, -23.0), (100.0, 0.0))]
    lines = per_size_table("rig-a", {"files": files})
    assert lines[1] == "rig-a, alltoall 4x2 (3 trials): per size, median over trials"
    assert _engine.collectives.decision("alltoall", 8, 65536) == "linear_sync"
    # Medians: measured 110, error -9 (of -9, -23, 0), without pass cost 90 us and -19.
    assert lines[-1] == "| 65536 | linear_sync | 110.0 | 100.0 | -9.0 (-9, -23, +0) | 90.0, -19.0 |"
