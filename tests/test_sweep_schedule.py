"""Which point runs when: the memory budget, the backend's slots, and a point that fails
while the others go on."""
import dataclasses
import json
import signal
import subprocess
import sys
import time

import pytest

from hopsim.scenarios import parse_scenario
from hopsim.scenarios.sweep import execute, plan

MIB = 2**20
FIVE = """\
name = "five"
platform = "two-nodes"
workload = "roundtrip"
ranks = 2
exchanges = 2
[sweep]
seed = [1, 2, 3, 4, 5]
"""


class Recorder:
    """A backend that finishes its points in the order they started, one per wait(),
    and remembers what ran at once."""

    def __init__(self, slots, memory):
        self.slots, self.memory = slots, memory
        self.running, self.starts, self.peak = [], [], 0

    def submit(self, number, args):
        self.running.append(number)
        self.starts.append(number)
        self.peak = max(self.peak, sum(self.memory[k - 1] for k in self.running))

    def wait(self, timeout):
        k = self.running.pop(0)
        return [(k, {"ok": True, "result": {"point": k}})]

    def close(self, interrupted=False):
        pass


def _plan(memory):
    return dataclasses.replace(plan(parse_scenario(FIVE, "five.toml")), memory=memory)


def test_running_points_fit_the_budget_and_smaller_ones_fill_in():
    memory = [60 * MIB, 60 * MIB, 30 * MIB, 50 * MIB, 10 * MIB]
    backend = Recorder(3, memory)
    done, failures = execute(_plan(memory), backend, budget=100 * MIB)
    # By hand: 1 (60) and 3 (90) and 5 (100) start; 2 and 4 do not fit. 1 ends: 2 (100)
    # starts and fills the 3 slots. 3 ends (70 in use): 4 would make 120. 5 ends (60): 4
    # still 110. 2 ends: 4 starts alone.
    assert backend.starts == [1, 3, 5, 2, 4]
    assert backend.peak == 100 * MIB
    assert sorted(done) == [1, 2, 3, 4, 5] and failures == []


def test_slots_bound_the_points_in_flight_without_a_budget():
    memory = [MIB] * 5
    backend = Recorder(2, memory)
    execute(_plan(memory), backend, budget=None)
    assert backend.starts == [1, 2, 3, 4, 5] and backend.peak == 2 * MIB


def test_a_point_above_the_budget_runs_alone():
    memory = [150 * MIB, 10 * MIB, 10 * MIB, 10 * MIB, 10 * MIB]
    backend = Recorder(4, memory)
    execute(_plan(memory), backend, budget=100 * MIB)
    assert backend.peak == 150 * MIB  # point 1 alone; the next start once it ended
    assert backend.starts == [1, 2, 3, 4, 5]


def test_a_point_that_cannot_fit_alone_is_refused_up_front_by_name(tmp_path):
    # 16384 ranks x 100000 recorded round trips at 32 B each: 48.8 GiB, 49.7 GiB in all
    # (hopsim.bounds.memory_estimate), beyond this machine's 24 GiB.
    (tmp_path / "s.toml").write_text(
        'name = "big"\nplatform = "two-nodes"\nworkload = "roundtrip"\nexchanges = 100000\n'
        'overlay = "random"\n[platform_overrides]\nnodes = 16384\n'
        "[sweep]\nranks = [2, 16384]\n")
    p = subprocess.run([sys.executable, "-m", "hopsim", "run", "s.toml", "--out", "out"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1
    assert p.stderr.startswith("hopsim: error: s.toml: point 2 (ranks=16384): this run needs "
                               "about 49.7 GiB of memory (ranks 16384, nodes 16384, "
                               "exchanges 100000, random overlay); "), p.stderr
    assert not (tmp_path / "out").exists()


FAILING = """\
name = "failing"
platform = "two-nodes"
workload = "roundtrip"
[platform_overrides]
nodes = 4096
[sweep]
case = [{ranks = 8, exchanges = 5}, {ranks = 16, exchanges = 5}, {ranks = 4096, exchanges = 40}]
"""


def test_a_failed_point_is_reported_with_its_parameters_and_the_sweep_goes_on(tmp_path):
    (tmp_path / "s.toml").write_text(FAILING)
    ref = subprocess.run([sys.executable, "-m", "hopsim", "run", "s.toml", "--out", "ref",
                          "--jobs", "1"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    assert ref.returncode == 0, ref.stderr
    proc = subprocess.Popen([sys.executable, "-m", "hopsim", "run", "s.toml", "--out", "out",
                             "--jobs", "1"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    points = tmp_path / "out" / "points"
    deadline = time.monotonic() + 300
    while len(list(points.glob("0*.json"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    # Point 3 runs now, in the engine's forked child: kill it as the out-of-memory
    # killer would.
    child = None
    while child is None and time.monotonic() < deadline:
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(proc.pid)], capture_output=True,
                             text=True).stdout.split()
        child = int(out[0]) if out else None
    time.sleep(0.2)
    subprocess.run(["kill", "-KILL", str(child)])
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 3, err
    assert err.splitlines() == [
        "hopsim: s.toml: point 3 (ranks=4096, exchanges=40) failed: RuntimeError: the "
        "simulation died with signal 9",
        "hopsim: 1 of 3 points failed (listed above); the same command reruns only them "
        "(finished points are kept in out/points)"]
    rows = (tmp_path / "out" / "results.csv").read_text().splitlines()
    assert [r.split(",")[0] for r in rows] == ["point", "1", "2"]
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert doc["failed"] == [{"point": 3, "parameters": {
        "platform": "two-nodes", "workload": "roundtrip", "ranks": 4096, "ranks_per_node": 1,
        "seed": 1, "exchanges": 40}, "error": "RuntimeError: the simulation died with signal 9"}]
    assert sorted(p.name for p in points.iterdir()) == ["000001.json", "000002.json",
                                                         "sweep.json"]
    # The same command runs point 3 alone and completes the sweep.
    again = subprocess.run([sys.executable, "-m", "hopsim", "run", "s.toml", "--out", "out",
                            "--jobs", "1"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=600)
    assert again.returncode == 0, again.stderr
    assert ((tmp_path / "out" / "results.csv").read_bytes()
            == (tmp_path / "ref" / "results.csv").read_bytes())
    assert not points.exists()


@pytest.mark.parametrize("flag, message", [
    (["--jobs", "0"], "--jobs: must be 1 to 1024 worker processes, got 0"),
    (["--jobs", "-3"], "--jobs: must be 1 to 1024 worker processes, got -3"),
    (["--jobs", "two"], None),
    (["--dask", " "], "--dask: empty address (tcp://HOST:PORT)"),
])
def test_bad_jobs_or_dask_is_one_line(flag, message, tmp_path):
    (tmp_path / "s.toml").write_text(FIVE)
    p = subprocess.run([sys.executable, "-m", "hopsim", "run", "s.toml", "--out", "out", *flag],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1, p.stderr
    if message:
        assert p.stderr == f"hopsim: error: {message}\n"
    assert not (tmp_path / "out").exists()



def test_a_worker_takes_its_resident_size_of_the_budget():
    # /proc/self/status's VmRSS (KiB) is the same resident size as statm's pages.
    from hopsim.scenarios.parallel import _own_rss

    with open("/proc/self/status") as f:
        vm_rss = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmRSS:"))
    assert abs(_own_rss() - vm_rss) < 0.1 * vm_rss


def test_killing_the_pool_leaves_its_workers_dead_and_reaped():
    from hopsim.scenarios.parallel import Processes

    pool = Processes(2)
    try:
        # A worker process exists once something is submitted (any callable will do).
        assert pool._pool.submit(sum, [1, 2]).result(timeout=60) == 3
        workers = list(pool._pool._processes.values())
        assert workers
    finally:
        pool.close(interrupted=True)
    # Killed and joined before close returns: each has its exit status (-SIGKILL).
    assert [w.exitcode for w in workers] == [-signal.SIGKILL] * len(workers)
