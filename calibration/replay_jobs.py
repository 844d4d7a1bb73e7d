"""How many replays run at once: validate's and the joint fit's simulations (--jobs).

Each simulation runs in a child process of its own; the engine keeps up to jobs() of them
running, all forked from the calling thread (simulator/child_runs.cpp), and gives their
results in the runs' order, so the outcome is the same for any number of jobs.
"""
from __future__ import annotations

from ..machine import cores

_jobs: int | None = None


def set_jobs(jobs: int | None) -> None:
    """Simulations at once from now on in this process (--jobs); None: one per core."""
    global _jobs
    _jobs = jobs


def jobs() -> int:
    return _jobs if _jobs is not None else cores()
