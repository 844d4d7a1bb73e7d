"""Which measured cases are latency-bound: Hockney's half-performance length.

With a message's time t(n) = t0 + n / r (t0 the zero-byte time, r the rate), a message
of n½ = t0 · r bytes takes twice t0: below n½ the per-message costs dominate (latency,
and on an emulated cluster with more busy-polling ranks than cores, the scheduler), above
it the bytes do (R. W. Hockney, "The communication challenge for MPP", Parallel Computing
20(3), 1994). So a case is latency-bound when it takes less than HALF_PERFORMANCE times
its run's zero-byte time; the rate never enters, and no model does: the rule reads only
measurements, so it cannot lean toward the cases a fit gets right.

A run that measures one size only (latency_checker's 4000 B) has no zero-byte time of its
own: its size is compared with n½ of the rig's 2-host ping-pong instead (rig_half_length).
"""
from __future__ import annotations

import statistics
from pathlib import Path

HALF_PERFORMANCE = 2.0


def half_length(times: dict[int, float]) -> float | None:
    """n½ in bytes of a ping-pong curve {bytes: time}: the size at which the time first
    reaches HALF_PERFORMANCE times the zero-byte time, linear between the measured sizes
    around it; None without a zero-byte time or when no size reaches it."""
    if 0 not in times or times[0] <= 0:
        return None
    target = HALF_PERFORMANCE * times[0]
    sizes = sorted(times)
    for lo, hi in zip(sizes, sizes[1:]):
        if times[hi] >= target:
            if times[lo] >= target:
                return float(lo)
            return lo + (hi - lo) * (target - times[lo]) / (times[hi] - times[lo])
    return None


def rig_half_length(files: list[Path]) -> float | None:
    """n½ of a rig's 2-host IMB PingPong files (its t per size, median over the files);
    None when none parses."""
    from .parsers import parse_file
    from ..errors import InputError

    by_size: dict[int, list[float]] = {}
    for f in files:
        try:
            rows = [m for m in parse_file(f) if m.statistic == "t_us" and m.rank is None]
        except (InputError, OSError):
            continue
        for m in rows:
            by_size.setdefault(m.size, []).append(m.value)
    return half_length({s: statistics.median(v) for s, v in by_size.items()})


def pingpong_half_length(cases: list[dict]) -> float | None:
    """n½ of the inter-node ping-pong among validate's JSON cases (2 ranks, one per node:
    IMB PingPong, osu_latency, NetPIPE), each size's median over the files that measure
    it; None without one that has a zero-byte time."""
    by_size: dict[int, list[float]] = {}
    for c in cases:
        if c["workload"] == "pingpong" and c["ranks"] == 2 and c["ranks_per_node"] == 1:
            by_size.setdefault(c["bytes"], []).append(c["measured_us"])
    return half_length({s: statistics.median(v) for s, v in by_size.items()})


def zero_byte_times(cases: list[dict]) -> dict[tuple, float]:
    """{(file, workload, statistic): measured zero-byte time} of validate's JSON cases."""
    return {(c["file"], c["workload"], c.get("statistic")): c["measured_us"]
            for c in cases if c["bytes"] == 0}


def latency_bound(case: dict, t0: float | None, n_half: float | None) -> bool:
    """Whether a measured case is latency-bound (module docstring): under HALF_PERFORMANCE
    times its run's zero-byte time t0; without one, smaller than the rig's n½; with
    neither, it is taken as latency-bound (nothing shows otherwise)."""
    if t0 is not None:
        return case["measured_us"] < HALF_PERFORMANCE * t0
    return n_half is None or case["bytes"] < n_half


def counted(case: dict, cores: int, t0: float | None = None, n_half: float | None = None) -> bool:
    """Whether a predicted case counts toward issue 16's targets. Left out, as the issue
    allows: a latency-bound case that runs more busy-polling ranks than the measuring
    machine has cores. Every rank of an emulated rig shares those cores, so such a case's
    time is the scheduler's (each rank yields, mpi_yield_when_idle), which no network
    model predicts; it is still shown, in the all-cases columns."""
    return case["ranks"] <= cores or not latency_bound(case, t0, n_half)


def counted_flags(cases: list[dict], cores: int, n_half: float | None) -> list[bool]:
    """counted() of each of validate's JSON cases, each against its own run's zero-byte
    time (zero_byte_times), else n_half: the rigs report's count, in the cases' order."""
    t0 = zero_byte_times(cases)
    return [counted(c, cores, t0.get((c["file"], c["workload"], c.get("statistic"))), n_half)
            for c in cases]
