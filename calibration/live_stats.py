"""The round-trip statistics of the real tools, from raw whole-microsecond timings.

The one definition of these figures for live runs (hopbench prints raw per-rank round
trips, in the order they were measured; everything below is computed here). Each
function follows the tool's own source, which is what a published figure used:

- latency_checker (process.c, get_result / get_result_reply): a histogram of the round
  trips below 1000 us; the mode is the first bin with the highest count (bin 0 when
  nothing was kept); the average is over the kept round trips (0 when none); rank 0
  prints the mean of all ranks' averages, zeros included.
- Ray's network test (code/NetworkTest/NetworkTest.cpp): the mode is taken over all
  round trips in arrival order, a value replacing the current mode only when its count
  becomes strictly higher (so ties go to the value that got there first, not the
  smallest); the average is an integer division over the round trips of at most
  4096 us (0 when none). AverageForAllRanks and StandardDeviation (RayPlatform's
  core/statistics.cpp) are over the per-rank averages of at most 4096 us, with an
  integer sum, and each deviation truncated to an integer before it is squared.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

LC_BINS = 1000
RAY_MAXIMUM_US = 4096
# Ray's marker for a rank that measured nothing.
RAY_NOT_AVAILABLE = 123123123


def latency_checker_rank(rtts: Sequence[int]) -> tuple[int, float]:
    """(mode, average) of one rank, as latency_checker's get_result prints them."""
    freq = Counter(int(v) for v in rtts if 0 <= v < LC_BINS)
    mode = 0
    for i in range(LC_BINS):
        if freq.get(i, 0) > freq.get(mode, 0):
            mode = i
    top = freq.get(mode, 0)
    # The tool skips bins holding at least 10x the mode's count: only empty bins when
    # something was kept, every bin when nothing was.
    kept = {i: f for i, f in freq.items() if f < 10 * top}
    n = sum(kept.values())
    return mode, (sum(i * f for i, f in kept.items()) / n if n else 0.0)


def latency_checker_average(averages: Sequence[float]) -> float:
    """Rank 0's "average of average roundtrip latencies": every rank, zeros included."""
    return sum(averages) / len(averages) if averages else 0.0


def ray_rank(rtts: Sequence[int]) -> tuple[int, int]:
    """(mode, average) of one rank, as Ray's getModeLatency / getAverageLatency."""
    counts: dict[int, int] = {}
    mode = RAY_NOT_AVAILABLE
    for v in rtts:
        v = int(v)
        counts[v] = counts.get(v, 0) + 1
        if mode not in counts or counts[v] > counts[mode]:
            mode = v
    kept = [int(v) for v in rtts if v <= RAY_MAXIMUM_US]
    return mode, (_c_div(sum(kept), len(kept)) if kept else 0)


def ray_all_ranks(averages: Sequence[int]) -> tuple[float, float]:
    """(AverageForAllRanks, StandardDeviation) of NetworkTest.txt."""
    values = [int(a) for a in averages if a != RAY_NOT_AVAILABLE and a <= RAY_MAXIMUM_US]
    n = len(values)
    average = float(sum(values)) / n if n else 0.0
    squares = sum(_trunc(x - average) ** 2 for x in values)
    return average, math.sqrt(squares / n if n else squares)


def _c_div(a: int, b: int) -> int:
    """C's integer division (truncation towards zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _trunc(x: float) -> int:
    return int(x)  # Python's int() truncates towards zero, as C's (int) cast


def nearest_rank(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of sorted values (the engine's rtt_us.p50 and p99)."""
    k = math.ceil(p / 100.0 * len(sorted_values))
    return sorted_values[max(k, 1) - 1]


def population_sd(values: Sequence[float]) -> tuple[float, float]:
    """(mean, population standard deviation); NaN for no values."""
    if not values:
        return math.nan, math.nan
    m = sum(values) / len(values)
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / len(values))
