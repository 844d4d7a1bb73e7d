"""The NIC queue a rendezvous's control message waits behind: sampled live (hopsim live
--sample-nic-queue), read from the live JSON, set by calibrate as network.nic_queue_bytes."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from hopsim.calibration.calibrate import calibrate_files
from hopsim.calibration.parsers import parse_file
from hopsim.errors import InputError
from hopsim.live.mpirun import run_live
from hopsim.platforms import Platform

from test_live_cluster import REASON, clean_before_after, leftovers  # noqa: F401

PROBE = "tests/data/live/exchange-nic-queue-2x400mbit/result.json"
live_only = pytest.mark.skipif(REASON is not None, reason=str(REASON))


def test_the_live_json_gives_the_queues_99th_percentile():
    doc = json.load(open(PROBE))
    q = [m for m in parse_file(PROBE) if m.workload == "nic_queue"]
    assert len(q) == 1
    assert q[0].value == doc["live"]["nic_queue"]["p99_bytes"] == 569462   # not the max, 884176
    assert q[0].repetitions == 18744                                       # the samples behind it


def test_calibrate_sets_the_platforms_nic_queue_from_it():
    fit = calibrate_files([PROBE], base="two-nodes", nodes=2)
    assert fit.fit.platform.nic_queue_bytes == 569462
    assert "99th percentile" in fit.fit.platform.provenance["network.nic_queue_bytes"]
    assert PROBE in fit.fit.platform.provenance["network.nic_queue_bytes"]


def test_without_a_sampled_run_calibrate_keeps_the_default():
    fit = calibrate_files(["tests/data/live/exchange-4x2-block-t1/result.json"], base="two-nodes")
    assert fit.fit.platform.nic_queue_bytes == 0


def test_a_malformed_sample_is_one_line_naming_the_file(tmp_path):
    doc = json.load(open(PROBE))
    doc["live"]["nic_queue"]["p99_bytes"] = "lots"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"bad\.json:1: expected live\.nic_queue with integer p99_bytes"):
        parse_file(bad)


@pytest.mark.parametrize("value", [-1, 1.5, "x"])
def test_the_platform_refuses_a_queue_that_is_not_a_byte_count(value):
    with pytest.raises(InputError, match="nic_queue_bytes"):
        Platform(name="p", nodes=2, cores=1, latency_us=1.0, bandwidth_gbps=1.0, nic_queue_bytes=value)


@pytest.mark.parametrize("args", [["--ranks", "2"],
                                  ["--ranks", "2", "--emulate-cluster", "2", "--link-rate", "none"]])
def test_sampling_needs_an_emulated_tbf(args):
    p = subprocess.run([sys.executable, "-m", "hopsim", "live", "--workload", "exchange",
                        "--sample-nic-queue", *args], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == ("hopsim: error: --sample-nic-queue samples an emulated host's tbf: it needs "
                                "--emulate-cluster with a --link-rate other than none")


@live_only
def test_a_sampled_run_records_its_queue_and_leaves_no_sampler(clean_before_after):
    result, _ = run_live("exchange", 2, emulate_cluster=2, link_rate="200mbit", burst=32768,
                         sizes=[1048576], repetitions=20, sample_nic_queue=True, timeout=120)
    q = result["live"]["nic_queue"]
    assert q["hosts"] == 2 and q["samples"] > 100
    # A 1 MiB message each way through a 200 Mbit/s tbf: the hosts' queues hold bytes a
    # good part of the time, and the percentiles are ordered.
    assert q["nonzero_fraction"] > 0.1
    assert 0 < q["median_nonzero_bytes"] <= q["p99_bytes"] <= q["max_bytes"]
    assert q["p90_bytes"] <= q["p99_bytes"]


@live_only
def test_an_interrupted_sampled_run_leaves_nothing_behind(clean_before_after):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    proc = subprocess.Popen([sys.executable, "-m", "hopsim", "live", "--emulate-cluster", "2",
                             "--link-rate", "200mbit", "--workload", "exchange", "--ranks", "2",
                             "--sizes", "1048576", "--repetitions", "100000", "--sample-nic-queue",
                             "--timeout", "120"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 30
    while not subprocess.run(["pgrep", "-f", "hopbench exchange"], capture_output=True).stdout:
        assert proc.poll() is None and time.time() < deadline, "the run never started"
        time.sleep(0.1)
    time.sleep(1.0)  # mid-run: the sampler is asking tc
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert out == ""
    assert leftovers() == ([], [], [])
