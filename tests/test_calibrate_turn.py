"""calibrate --machine-cores: every measured node on one machine; the machine's turn
(host.turn_us) fitted from round trips with more ranks than its cores (docs/model.md,
"One machine for every node"; docs/calibration.md)."""
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest

from hopsim.calibration.calibrate import calibrate_files
from hopsim.calibration.structure import _bucket
from hopsim.platforms.platform import Platform
from simulated_runs import write_run

# 2 nodes of 2 cores on one machine of 2 cores: a run of 4 ranks takes n = 2 turns a pass.
TRUTH = Platform(name="truth", nodes=2, cores=2, latency_us=10.0, bandwidth_gbps=1.0, pass_us=1.0,
                 nic_message_us=0.0, machine_cores=2, turn_us=3.0)
BASE = TRUTH.replace(name="base", machine_cores=None, turn_us=None)


def _round_trips(tmp_path, name, ranks, ranks_per_node, platform=TRUTH, size=0):
    return write_run(tmp_path, name, platform, "roundtrip", ranks=ranks,
                     ranks_per_node=ranks_per_node, exchanges=200, request_bytes=size,
                     reply_bytes=size)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("turn")
    return {"2x1": _round_trips(d, "rt-2x1.json", 2, 1), "2x2": _round_trips(d, "rt-2x2.json", 4, 2)}


def test_the_turn_is_recovered_from_runs_with_more_ranks_than_cores(runs):
    r = calibrate_files([runs["2x1"], runs["2x2"]], base=BASE, machine_cores=2)
    p = r.fit.platform
    assert p.machine_cores == 2
    # The engine's statistic is binned in whole microseconds: within a bin's worth.
    assert p.turn_us == pytest.approx(3.0, rel=0.1)
    prov = p.provenance["host.turn_us"]
    assert "Brent" in prov and "one machine of 2 cores" in prov and "rt-2x2.json" in prov
    assert "--machine-cores" in p.provenance["nodes.machine_cores"]


def test_the_scheduler_is_not_read_as_a_nic_cost(runs):
    # Without --machine-cores the 4-rank run's extra time is fitted as a per-node NIC
    # cost; on one machine of 2 cores it is the turns, and the NIC fitter stands aside.
    plain = calibrate_files([runs["2x1"], runs["2x2"]], base=BASE)
    assert plain.fit.platform.nic_message_us > 0.5
    one = calibrate_files([runs["2x1"], runs["2x2"]], base=BASE, machine_cores=2)
    assert one.fit.platform.nic_message_us == 0.0
    assert "machine's turns" in dict(one.fit.skipped)["per-node NIC message cost"]


def test_without_a_run_beyond_the_cores_there_is_no_turn(runs):
    r = calibrate_files([runs["2x1"]], base=BASE, machine_cores=2)
    p = r.fit.platform
    assert p.machine_cores == 2 and p.turn_us == 0.0
    assert "no round-trip run" in p.provenance["host.turn_us"]
    assert "more ranks than the machine's 2 cores" in dict(r.fit.skipped)["machine's turn from round trips"]


def test_the_round_trip_fit_takes_the_run_with_fewest_ranks(tmp_path):
    # A 4-rank run listed first must not set the round trip's fit (without a ping-pong,
    # the latency): 4 ranks on 2 cores put the machine's turns into it.
    few = _round_trips(tmp_path, "rt-2x1.json", 2, 1)
    many = _round_trips(tmp_path, "rt-4x1.json", 4, 1, TRUTH.replace(nodes=4))
    base = BASE.replace(nodes=4, latency_us=5.0)
    alone = calibrate_files([few], base=base).fit.platform.latency_us
    assert alone == pytest.approx(10.0, rel=0.1)
    assert calibrate_files([many, few], base=base).fit.platform.latency_us == alone
    assert calibrate_files([many], base=base).fit.platform.latency_us > 1.2 * alone


def test_runs_beyond_the_cores_fit_the_turn_only(tmp_path, runs):
    # Two 4-rank runs one turn cannot both meet (the 4000 B one made with twice the
    # turn): in the joint fit they would bend the network's values; they fit the turn
    # alone, on the network fitted from the 2-rank run, which is the same with or without
    # them.
    odd = _round_trips(tmp_path, "rt-2x2-4000.json", 4, 2, TRUTH.replace(turn_us=6.0), 4000)
    base = BASE.replace(latency_us=14.0, pass_us=0.5)
    alone = calibrate_files([runs["2x1"]], base=base, machine_cores=2, joint=True, cap=None)
    both = calibrate_files([runs["2x1"], runs["2x2"], odd],
                           base=base, machine_cores=2, joint=True, cap=None)
    a, b = alone.fit.platform, both.fit.platform
    assert (b.latency_us, b.pass_us) == (a.latency_us, a.pass_us)
    assert b.turn_us > 0 and "the other runs fitted" in b.provenance["host.turn_us"]
    assert "machine's turn: host.turn_us = " in both.text
    assert "fit the turn only" in both.text


def test_the_turn_alone_onto_a_fitted_network(runs):
    # Only the 4-rank run: the network stays --base's, value for value, and the run
    # fits the turn, as it does beside the network's own runs.
    r = calibrate_files([runs["2x2"]], base=BASE, machine_cores=2, joint=True, cap=None)
    p = r.fit.platform
    assert p.turn_us == pytest.approx(3.0, rel=0.1)
    assert (p.latency_us, p.bandwidth_gbps, p.pass_us, p.nic_message_us) == (
        BASE.latency_us, BASE.bandwidth_gbps, BASE.pass_us, BASE.nic_message_us)
    assert "every case has more ranks than the machine's 2 cores" in r.text


def test_no_bucket_takes_the_buckets_headers_with_it():
    # A --base with a bucket and its headers: "no bucket" must be a valid platform (it
    # once failed: bucket_message_bytes needs a bucket).
    p = TRUTH.replace(bucket_gbps=0.5, bucket_burst_bytes=64000.0, bucket_message_bytes=80.0)
    alternatives, _ = _bucket(p, p, [SimpleNamespace(workload="roundtrip", ranks=2,
                                                     ranks_per_node=1)])
    off = next(a for a in alternatives if a.label == "no bucket").platform
    assert (off.bucket_gbps, off.bucket_burst_bytes, off.bucket_message_bytes) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("args, message", [
    (["--machine-cores", "0"], "--machine-cores"),
    (["--machine-cores", "two"], "--machine-cores"),
    (["--machine-cores", "2", "--closed-form"], "--machine-cores"),
])
def test_bad_machine_cores_exit_2_in_one_line(runs, tmp_path, args, message):
    out = tmp_path / "p.toml"
    r = subprocess.run([sys.executable, "-m", "hopsim", "calibrate", runs["2x1"], "--out", str(out),
                        *args], capture_output=True, text=True)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr
    assert not out.exists()


def test_the_turn_is_checked_on_the_runs_it_was_not_fitted_to(tmp_path, runs):
    # The turn comes from the 0 B run of 4 ranks; a 4000 B run of 4 ranks made with the
    # same turn is explained by it, one made with no turn at all (a scheduler whose
    # turns overlap the transfers, as rig A's links showed) is not, and the report says so.
    same = _round_trips(tmp_path, "rt-2x2-4000.json", 4, 2, TRUTH, 4000)
    none = _round_trips(tmp_path, "rt-2x2-4000-free.json", 4, 2, TRUTH.replace(turn_us=0.0), 4000)
    lines, turns = {}, {}
    for name, run in (("same", same), ("none", none)):
        r = calibrate_files([runs["2x1"], runs["2x2"], run], base=BASE, machine_cores=2,
                            joint=True, cap=None)
        [line] = [l for l in r.text.splitlines() if "checked on runs it was not fitted to" in l]
        lines[name], turns[name] = line, r.fit.platform
    assert "4000 B" in lines["same"] and lines["same"].endswith("within 10%"), lines["same"]
    assert "the turn does not explain it" in lines["none"], lines["none"]
    # Explained, the turn is written; contradicted, it is not, and its provenance says why.
    assert turns["same"].turn_us == pytest.approx(3.0, rel=0.1)
    assert turns["none"].turn_us == 0.0 and turns["none"].machine_cores == 2
    prov = turns["none"].provenance["host.turn_us"]
    assert prov.startswith("contradicted by the files") and "4000 B (+" in prov, prov
    # Measured, with the turn, without: the run made without a turn is met without it.
    assert re.search(r"with the turn [\d.]+ us \(\+\d+\.\d%\), without [\d.]+ us \(\+0\.0%\)",
                     lines["none"]), lines["none"]
