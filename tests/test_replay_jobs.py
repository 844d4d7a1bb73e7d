"""Replays several at once (--jobs; calibration/replay_jobs.py, the engine's
simulate_batch): they really overlap, give the same numbers as one at a time, name the
first bad run in order, and an interrupt leaves no simulation running.
(tests/cpp/test_child_runs.cpp checks the engine's side: order, failures, abandon.)"""
import os
import signal
import threading
from pathlib import Path

import pytest

from hopsim.api import RunInputError, simulate_batch
from hopsim.calibration import replay_jobs
from hopsim.calibration.validate import Case, simulate_cases
from hopsim.errors import InputError
from hopsim.platforms.platform import Platform

PLAIN = Platform(name="plain", nodes=4, cores=1, latency_us=20.0, bandwidth_gbps=1.0)


def _cases(n_files=4):
    return [Case(f"f{k}.txt", 1, "osu_latency", "pingpong", 2, 1, size, "latency_us", 30.0,
                 {"sizes": [size], "iterations": 5})
            for k in range(n_files) for size in (0, 1000, 100000)]


@pytest.fixture
def jobs():
    yield replay_jobs.set_jobs
    replay_jobs.set_jobs(None)


def _children() -> set[str]:
    """This process's children (the engine forks them from the main thread; other tests
    in the same pytest worker may have left their own, which is why callers compare)."""
    pids = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            pids.update((task / "children").read_text().split())
        except OSError:
            pass
    return pids


def _most_children_during(batch) -> int:
    """The most new children seen at once while batch() runs (the GIL is free meanwhile)."""
    before, seen, stop = _children(), [0], threading.Event()

    def watch():
        while not stop.is_set():
            seen[0] = max(seen[0], len(_children() - before))

    w = threading.Thread(target=watch)
    w.start()
    try:
        batch()
    finally:
        stop.set()
        w.join()
    return seen[0]


def _long_runs(n):
    return [dict(platform=PLAIN, workload="pingpong", ranks=2, sizes=[1 << 20], iterations=20000)
            for _ in range(n)]


@pytest.mark.parametrize("j", [1, 2, 3])
def test_jobs_children_run_at_once(j):
    assert _most_children_during(lambda: simulate_batch(_long_runs(4), jobs=j)) == j


@pytest.mark.parametrize("platform", [PLAIN, PLAIN.replace(name="noisy", noise_scope="message",
                                                            noise_median_us=3.0, noise_sigma=0.5)])
def test_any_number_of_jobs_gives_the_same_values(jobs, platform):
    runs = {}
    for j in (1, 2, 3):
        jobs(j)
        cases = _cases()
        simulate_cases(platform, cases)
        runs[j] = [(c.simulated_us, tuple(c.distribution)) for c in cases]
    assert runs[1] == runs[2] == runs[3]
    sizes = [v for v, _ in runs[1][:3]]
    assert sizes[0] < sizes[1] < sizes[2]  # each case got its own size's value
    assert bool(runs[1][0][1]) == (platform.noise_scope != "off")


def test_the_first_bad_run_in_order_is_the_one_named(jobs):
    good = dict(platform=PLAIN, workload="pingpong", ranks=2, sizes=[1000], iterations=3)
    runs = [good, dict(good, ranks_per_node=2), good, dict(good, sizes=[-1])]
    with pytest.raises(RunInputError) as e:
        simulate_batch(runs, jobs=3)
    assert e.value.index == 1 and "exceed the cores" in str(e.value)
    # In validate, the group's first case names it.
    jobs(2)
    cases = _cases(2)
    cases[3] = Case("bad.txt", 7, "osu_latency", "pingpong", 4, 2, 0, "latency_us", 30.0,
                    {"sizes": [0], "iterations": 5})
    with pytest.raises(InputError, match=r"^bad\.txt:7: cannot replay"):
        simulate_cases(PLAIN, cases)


def test_an_interrupt_stops_every_running_simulation():
    before = _children()
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        simulate_batch(_long_runs(3) * 10, jobs=2)
    timer.join()
    assert _children() <= before  # every child it started is gone, reaped
