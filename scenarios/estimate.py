"""A sweep's cost before it runs: point count, memory (hopsim.bounds.memory_estimate, the
estimate bench/memory.py checks against measured peaks) and wall time.

The time is a model, calibrated here: a run costs a fixed part (fork, SimGrid, building
the platform's hosts) plus its messages at the engine's message rate. The fixed part is
a 2-rank probe on the sweep's first platform; the rate comes from the sweep's own
costliest round-trip point cut to one exchange when that is at most PROBE_MESSAGES
messages (its overlay, reception and contention included), else from an uncontended
probe (64 ranks, one per node, any-source). Each point's messages are counted from its
parameters:

    roundtrip   2 x ranks x exchanges x hops (an overlay's digits; 1 without one)
    pingpong    2 x iterations per size       (osu_latency: 10000, 1000 above 8 KiB)
    bandwidth   iterations x (window + 1)     (osu_bw: 100, 20 above 8 KiB)
    exchange    2 x ranks x repetitions per size
    pingping, sendrecv   ranks x repetitions per size
    collectives the messages of one repetition of the schedule the engine runs (its
                algorithm, or Open MPI's decision for the size) x repetitions per size

IMB's repetitions per size, when none are given, are the engine's (1000, fewer from
40 KiB: 40 MiB / size); IMB's 10-second rule can only lower them, so the count is an
upper bound there.

The uncontended rate is the engine's fastest: several ranks per node on the flow transport
(SimGrid's solver under contention) run up to 100 times fewer messages per second
(docs/performance.md), so without a probe of the sweep's own point the time printed is a
lower estimate; docs/scenarios.md shows it against measured sweeps.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from .. import bounds
from ..workload import COLLECTIVES, Workload, engine_family

LIMIT_SECONDS = 3600.0   # above this a sweep needs --yes (issue 20)
_PROBE_RANKS = 64
PROBE_MESSAGES = 200_000  # a probe of the sweep's own point: about a second at most
_PROBE_EXCHANGES = 100


@dataclass(frozen=True)
class Calibration:
    fixed_seconds: float      # one run's cost beyond its messages, on this platform
    messages_per_second: float


def memory(plat, work: Workload) -> int:
    return bounds.memory_estimate(plat.nodes, work.ranks, work.kind, work.exchanges,
                                  engine_family(work.overlay, work.seed),
                                  transport=plat.transport)


def messages(work: Workload) -> int:
    """The messages a run sends, from its parameters (the module docstring's table)."""
    if work.kind == "roundtrip":
        hops = 1
        built = work.overlay_built()
        if built is not None and built["family"] in ("debruijn", "kautz"):
            hops = built["digits"]
        return 2 * work.ranks * work.exchanges * hops
    from .. import _engine

    coll = _engine.collectives
    total = 0
    for size in work.sizes or (0,):
        if work.kind == "pingpong":
            total += 2 * ((work.iterations or (10000 if size <= 8192 else 1000)) + max(work.warmup, 0))
            continue
        if work.kind == "bandwidth":
            total += ((work.iterations or (100 if size <= 8192 else 20)) + max(work.warmup, 0)) * (work.window + 1)
            continue
        reps = work.repetitions or coll.imb_base_repetitions(size)
        if work.kind in COLLECTIVES:
            algorithm = work.algorithm or coll.decision(work.kind, work.ranks, size)
            total += reps * coll.messages(work.kind, algorithm, work.ranks, size)
        elif work.kind == "exchange":
            total += 2 * work.ranks * reps
        else:  # pingping, sendrecv
            total += work.ranks * reps
    return total


def _timed(platform, ranks: int, exchanges: int) -> tuple[float, int]:
    from ..api import simulate

    start = time.perf_counter()
    r = simulate(platform, "roundtrip", ranks=ranks, exchanges=exchanges, reception="any-source")
    return time.perf_counter() - start, r.messages


def fixed_seconds(plat) -> float:
    """One run's cost beyond its messages: 2 ranks, one round trip, on plat."""
    return _timed(plat if plat.nodes >= 2 else plat.replace(nodes=2), 2, 1)[0]


def calibrate(plat) -> Calibration:
    """Probe runs on plat: 2 ranks and one round trip (the fixed part); then, on plat with
    at least 64 nodes, 2 ranks and 64 ranks (one per node, 100 round trips each) whose
    difference is the message rate. A fraction of a second."""
    fixed = fixed_seconds(plat)
    wide = plat if plat.nodes >= _PROBE_RANKS else plat.replace(nodes=_PROBE_RANKS)
    base, _ = _timed(wide, 2, 1)
    spent, count = _timed(wide, _PROBE_RANKS, _PROBE_EXCHANGES)
    return Calibration(fixed, count / max(spent - base, 1e-6))


def calibrate_on(plat, args: dict) -> Calibration:
    """The rate measured on a sweep's own round-trip point cut to one exchange (its
    overlay's relays, its reception policy and its contention included), less the
    fixed part measured on its platform."""
    from ..api import simulate

    fixed = fixed_seconds(plat)
    start = time.perf_counter()
    r = simulate(**dict(args, exchanges=1))
    spent = time.perf_counter() - start
    return Calibration(fixed, r.messages / max(spent - fixed, 1e-6))


def seconds(calibration: Calibration, count: int) -> float:
    """One point's estimated wall time from its message count."""
    return calibration.fixed_seconds + count / calibration.messages_per_second


def duration(seconds_: float) -> str:
    if seconds_ < 120:
        return f"{seconds_:.0f} s"
    if seconds_ < 7200:
        return f"{seconds_ / 60:.0f} min"
    return f"{seconds_ / 3600:.1f} h"


def size(n: int) -> str:
    return f"{n / 2**30:.3g} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"
