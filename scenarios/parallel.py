"""Where a sweep's points run on this machine: in this process one after another
(--jobs 1, or a single point left), or in J worker processes.

A backend takes points (submit), hands back finished ones (wait) and is closed; the
sweep loop (hopsim.scenarios.sweep) decides which point goes next, so memory-aware
scheduling and resuming are the same for every backend (hopsim.scenarios.dask_backend
is the third).
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import multiprocessing
import os
import signal

from .worker import init_local_worker, run_point


class Inline:
    """Runs each point in this process when wait() is called (the engine still forks a
    child per run). An interrupt reaches the engine's wait directly."""

    def __init__(self):
        self.slots = 1
        self._queue: list[tuple[int, dict]] = []

    def submit(self, number: int, args: dict) -> None:
        self._queue.append((number, args))

    def wait(self, timeout: float) -> list[tuple[int, dict]]:
        if not self._queue:
            return []
        number, args = self._queue.pop(0)
        return [(number, run_point(args))]

    def close(self, interrupted: bool = False) -> None:
        self._queue.clear()


class Processes:
    """J worker processes (spawned: a fresh interpreter each, not a fork of this one with
    its threads). Each worker dies with this process (PR_SET_PDEATHSIG) and ignores
    Ctrl-C, which this process handles by killing them."""

    def __init__(self, jobs: int):
        self.slots = jobs
        self._jobs = jobs
        self._futures: dict[cf.Future, int] = {}
        self._pool = self._start()

    def _start(self):
        with _ctrl_c_held():
            return cf.ProcessPoolExecutor(max_workers=self._jobs,
                                          mp_context=multiprocessing.get_context("spawn"),
                                          initializer=init_local_worker,
                                          initargs=(os.getpid(),))

    def submit(self, number: int, args: dict) -> None:
        with _ctrl_c_held():  # the pool may start a worker here
            self._futures[self._pool.submit(run_point, args)] = number

    def wait(self, timeout: float) -> list[tuple[int, dict]]:
        if not self._futures:
            return []
        done, _ = cf.wait(self._futures, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        out, broken = [], False
        for future in done:
            number = self._futures.pop(future)
            try:
                out.append((number, future.result()))
            except cf.process.BrokenProcessPool:
                # A worker was killed (the out-of-memory killer, a user's kill): every
                # point it shared the pool with is lost with it and reported failed.
                broken = True
                out.append((number, {"ok": False, "error": "its worker process died "
                                                           "(killed, or out of memory)"}))
        if broken:
            for future, number in self._futures.items():
                out.append((number, {"ok": False, "error": "its worker process died "
                                                           "(killed, or out of memory)"}))
            self._futures.clear()
            self._kill()
            self._pool = self._start()
        return out

    def _kill(self):
        # ProcessPoolExecutor has no public kill before Python 3.14 (kill_workers); its
        # process table is the one handle on the workers.
        for process in list(getattr(self._pool, "_processes", {}).values()):
            try:
                process.kill()
            except (OSError, ValueError):
                pass
        self._pool.shutdown(wait=True, cancel_futures=True)

    def close(self, interrupted: bool = False) -> None:
        if interrupted:
            self._kill()  # running points are not waited for: their records never came
        else:
            self._pool.shutdown(wait=True)


# The signals hopsim stops on (Ctrl-C; SIGTERM and SIGHUP as Ctrl-C, cli._stop).
STOPS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})


@contextlib.contextmanager
def _ctrl_c_held():
    """A process started in here is born with the stop signals blocked (the mask is
    inherited through fork and exec), so it cannot die of one, traceback and all, while
    it still imports hopsim; in this process they wait and are delivered on leaving, when
    the pool knows the worker and an interrupt kills it. Held for Ctrl-C alone, a SIGTERM
    in the middle of starting a worker ended this process before the pool recorded it,
    and the worker, reading its half-written start-up data, printed EOFError's traceback
    (tests/test_terminal.py, on a loaded machine)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)


def available_budget(jobs: int) -> int:
    """Bytes the running points may take at once: the memory available now, less an
    interpreter per worker (this process's own resident size, the same imports)."""
    from ..bounds import available_memory

    return available_memory() - jobs * _own_rss()


def _own_rss() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0
