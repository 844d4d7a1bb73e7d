"""The estimate printed before a sweep, and the refusal of one above an hour."""
import os
import signal
import subprocess
import sys
import time

import pexpect
import pytest

import hopsim
from hopsim import make_workload
from hopsim.scenarios import estimate, parse_scenario, sweep

HOPSIM = [sys.executable, "-m", "hopsim"]


@pytest.mark.parametrize("kind, params, expected", [
    # 2 messages (request, reply) per exchange per rank, times the route's hops:
    ("roundtrip", dict(ranks=64, exchanges=10), 2 * 64 * 10),
    # B(2, 6) routes are up to 6 hops: 64 ranks x 10 exchanges x 2 x 6
    ("roundtrip", dict(ranks=64, exchanges=10, overlay="debruijn", degree=2), 7680),
    # osu_latency's own counts: 10000 at 0 bytes, 1000 at 16 KiB, 2 messages each
    ("pingpong", dict(ranks=2, sizes=[0, 16384]), 2 * 10000 + 2 * 1000),
    # osu's -i 50 -x 5: 55 round trips per size
    ("pingpong", dict(ranks=2, sizes=[0, 16384], iterations=50, warmup=5), 2 * 2 * 55),
    # osu_bw: 100 windows of 64 sends and an acknowledgement at 1 KiB
    ("bandwidth", dict(ranks=2, sizes=[1024]), 100 * 65),
    ("exchange", dict(ranks=4, sizes=[1, 2], repetitions=10), 2 * 4 * 10 * 2),
    ("sendrecv", dict(ranks=4, sizes=[1], repetitions=10), 40),
    # pairwise alltoall: every rank sends to every other, 3 repetitions
    ("alltoall", dict(ranks=8, sizes=[1024], repetitions=3, algorithm="pairwise"), 3 * 8 * 7),
    # linear bcast: the root sends to each other rank
    ("bcast", dict(ranks=8, sizes=[1024], repetitions=2, algorithm="basic_linear"), 2 * 7),
    # IMB: 40 MiB / 1 MiB = 40 repetitions of an exchange
    ("exchange", dict(ranks=4, sizes=[1048576]), 2 * 4 * 40),
])
def test_message_counts_by_hand(kind, params, expected):
    assert estimate.messages(make_workload(kind, **params)) == expected


@pytest.mark.parametrize("kind, params", [
    ("roundtrip", dict(ranks=8, exchanges=5)),
    ("pingpong", dict(ranks=2, sizes=[0, 1024], iterations=100)),
    ("bandwidth", dict(ranks=2, sizes=[1024], iterations=10)),
    ("pingpong", dict(ranks=2, sizes=[0, 1024], iterations=100, warmup=7)),
    ("bandwidth", dict(ranks=2, sizes=[1024], iterations=10, warmup=3)),
    ("exchange", dict(ranks=2, sizes=[1024], repetitions=10)),
    ("pingping", dict(ranks=2, sizes=[1024], repetitions=10)),
    ("sendrecv", dict(ranks=4, sizes=[1024], repetitions=10)),
    # Collectives: each size its own algorithm (Open MPI's decision), or the one given.
    ("alltoall", dict(ranks=8, sizes=[1024, 65536], repetitions=3)),
    ("allreduce", dict(ranks=8, sizes=[1024, 1048576], repetitions=2)),
    ("bcast", dict(ranks=6, sizes=[1024, 65536, 1048576], repetitions=2)),
    ("reduce", dict(ranks=5, sizes=[4, 1048576], repetitions=2)),
    ("allgather", dict(ranks=8, sizes=[1024, 65536], repetitions=2)),
    ("alltoall", dict(ranks=4, sizes=[1024], repetitions=2, algorithm="modified_bruck")),
    ("barrier", dict(ranks=8, repetitions=3)),
    # IMB's own repetitions: 1000, then 40 MiB / size (the 10-second rule does not bind).
    ("exchange", dict(ranks=2, sizes=[0, 1048576])),
    ("alltoall", dict(ranks=4, sizes=[1048576])),
])
def test_message_counts_are_the_engines_without_an_overlay(kind, params):
    ranks = params.pop("ranks")
    plat = hopsim.platforms.load("two-nodes").replace(nodes=ranks)
    r = hopsim.simulate(plat, kind, ranks=ranks, **params)
    assert estimate.messages(make_workload(kind, ranks, **params)) == r.messages


def test_time_model_and_the_forecast_by_hand(monkeypatch):
    assert estimate.seconds(estimate.Calibration(0.5, 1000.0), 2000) == 2.5
    s = parse_scenario('name = "five"\nplatform = "two-nodes"\nworkload = "roundtrip"\n'
                       "ranks = 2\nexchanges = 2\n[sweep]\nseed = [1, 2, 3, 4, 5]\n", "five.toml")
    p = sweep.plan(s)
    assert p.messages == [2 * 2 * 2] * 5
    # 1 s fixed + 8 messages at 8 per second: 2 s a point; 5 points on 2 jobs: 5 s.
    monkeypatch.setattr(sweep, "_calibration", lambda plan, pending: estimate.Calibration(1.0, 8.0))
    text, wall = sweep.forecast(p, [1, 2, 3, 4, 5], 2)
    assert wall == 5.0
    assert text.startswith("five: 5 points; about 5 s on 2 jobs (engine calibrated here: "
                           "8 messages/s, 1000 ms a run); peak memory 32 MiB a point, 64 MiB for 2 at once")
    text, wall = sweep.forecast(p, [4, 5], 8)  # one point is the floor: 2 s
    assert wall == 2.0 and text.startswith("five: 5 points (3 already finished); about 2 s on 2 jobs")


def test_calibration_measures_a_positive_rate_on_the_platform():
    plat = hopsim.platforms.load("two-nodes").replace(nodes=64)
    cal = estimate.calibrate(plat)
    assert cal.fixed_seconds > 0 and cal.messages_per_second > 0
    own = estimate.calibrate_on(plat, dict(platform=plat, workload="roundtrip", ranks=8,
                                           exchanges=50, overlay="debruijn", degree=2))
    assert own.fixed_seconds > 0 and own.messages_per_second > 0


def test_the_rate_probe_is_the_costliest_round_trip_point_cut_to_one_exchange(monkeypatch):
    s = parse_scenario('name = "two"\nplatform = "two-nodes"\nworkload = "roundtrip"\n'
                       "exchanges = 7\n[platform_overrides]\nnodes = 64\n"
                       "[sweep]\nranks = [8, 64, 16]\n", "two.toml")
    p = sweep.plan(s)
    seen = []
    monkeypatch.setattr(estimate, "calibrate_on",
                        lambda plat, args: seen.append(args) or estimate.Calibration(1, 1))
    sweep.forecast(p, [1, 2, 3], 2)
    assert [(a["ranks"], a["exchanges"]) for a in seen] == [(64, 7)]  # cut to 1 inside


HUGE = """\
name = "huge"
platform = "two-nodes"
workload = "pingpong"
ranks = 2
iterations = 2147483647
[sweep]
sizes = [[0], [1]]
"""


def test_a_sweep_estimated_above_an_hour_is_refused_without_yes(tmp_path):
    (tmp_path / "s.toml").write_text(HUGE)
    p = subprocess.run(HOPSIM + ["run", "s.toml", "--out", "out"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1
    assert p.stderr.startswith("hopsim: error: huge: 2 points; about ")
    assert p.stderr.endswith("refused: estimated above 60 min (run it with --yes)\n")
    assert not (tmp_path / "out").exists()


def test_with_yes_it_runs_and_an_interrupt_before_any_point_leaves_nothing(tmp_path):
    (tmp_path / "s.toml").write_text(HUGE)
    proc = subprocess.Popen(HOPSIM + ["run", "s.toml", "--out", "out", "--yes"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(8)  # past the calibration: the points run (billions of iterations each)
    assert proc.poll() is None
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.endswith("hopsim: interrupted\n"), err
    assert not (tmp_path / "out").exists()


def test_the_estimate_is_printed_on_a_terminal(tmp_path):
    (tmp_path / "s.toml").write_text('name = "five"\nplatform = "two-nodes"\nworkload = '
                                     '"roundtrip"\nranks = 2\nexchanges = 2\n[sweep]\nseed = [1, 2, 3]\n')
    child = pexpect.spawn(HOPSIM[0], HOPSIM[1:] + ["run", "s.toml", "--jobs", "1"],
                          cwd=str(tmp_path), timeout=120, dimensions=(24, 300),
                          env=dict(os.environ, TERM="xterm"))
    child.expect(r"five: 3 points; about \d+ s on 1 job \(engine calibrated here: [\d,]+ "
                 r"messages/s, \d+ ms a run\); peak memory "
                 r"32 MiB a point, 32 MiB for 1 at once")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
