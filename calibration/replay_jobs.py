"""How many replays run at once: validate's and the joint fit's simulations (--jobs).

Each simulation runs in a child process of its own; the engine keeps up to jobs() of them
running, all forked from the calling thread (simulator/child_runs.cpp), and gives their
results in the runs' order, so the outcome is the same for any number of jobs.
"""
from __future__ import annotations

import os

_jobs: int | None = None


def cores() -> int:
    """The cores this process may run on (its CPU affinity, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def set_jobs(jobs: int | None) -> None:
    """Simulations at once from now on in this process (--jobs); None: one per core."""
    global _jobs
    _jobs = jobs


def jobs() -> int:
    return _jobs if _jobs is not None else cores()
