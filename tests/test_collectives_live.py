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


def test_no_cost_is_not_identified(tmp_path):
    cost = reduce_cost(_files(tmp_path, 0.0), tmp_path, 3)
    assert not cost["used"] and cost["ns_per_byte"] == 0.0 and "not identifiable" in cost["why"]


def test_a_platform_variant_sets_one_key(tmp_path):
    fit = _files(tmp_path, 0.0)
    out = _with(fit, "reduce_ns_per_byte", 1.5, "v.toml")
    assert "reduce_ns_per_byte = 1.5" in out.read_text() and out.name == "v.toml"
    assert out.read_text().replace("reduce_ns_per_byte = 1.5", "reduce_ns_per_byte = 0.0") == fit.read_text()
