"""Measurement: one number a real benchmark (or hopsim) printed, and where it came from.

Every parser in hopsim.calibration.parsers turns a tool's output into a list of these,
so the fits and the validation never look at a tool's text layout.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .. import bounds
from ..errors import InputError


# latency_checker's and Ray's statistics are whole microseconds (gettimeofday differences)
# where a rank's round trips to itself take under one, and a rank that kept no round trip
# reports 0 (workloads.md): both tools print 0 legitimately.
WHOLE_US_STATISTICS = frozenset({"lc_mode_us", "lc_mean_us", "lc_average_of_averages_us",
                                 "ray_mode_us", "ray_mean_us", "ray_average_for_all_ranks_us"})


# A live run's sampled NIC queue (hopsim live --sample-nic-queue), in bytes: not a time
# of any case, the value calibrate sets network.nic_queue_bytes to.
NIC_QUEUE_STATISTIC = "nic_queue_p99_bytes"


@dataclass(frozen=True)
class Measurement:
    """One value of one statistic for one case.

    tool: the program that printed it ("osu_latency", "osu_bw", "imb", "netpipe",
    "latency_checker", "ray", "hopsim"). workload: hopsim's workload when it has one
    ("pingpong", "exchange", "roundtrip", "bandwidth" for osu_bw, "pingping", "sendrecv"),
    otherwise the tool's benchmark in lower case ("allreduce", ...). size: bytes per message (for a
    round trip, the request). statistic: the tool's own statistic with its unit in the
    name ("latency_us" is osu_latency's and NetPIPE's one-way time, half a round trip;
    "t_avg_us" is IMB's; "lc_average_of_averages_us" is latency_checker's). rank: set
    for a per-rank value. repetitions: the tool's count behind the value when printed (NetPIPE 3.7:
    derived by its own rule, parsers/netpipe.py);
    trials: how many trials the value summarises (NetPIPE). ranks_per_node: None when
    the file does not say (give it with --ranks-per-node). replay: for a hopsim or
    live JSON, the run's own workload parameters and seed ((key, value) pairs), which
    validate replays instead of a tool's fixed semantics.
    """

    tool: str
    workload: str
    ranks: int
    size: int | None
    statistic: str
    value: float
    source: str
    line: int
    ranks_per_node: int | None = None
    repetitions: int | None = None
    trials: int | None = None
    rank: int | None = None
    reply_size: int | None = None
    version: str = ""
    replay: tuple = ()

    def __post_init__(self):
        # The one check of every parsed number, whatever the format: finite and physical.
        def bad(what, got):
            raise InputError(f"{self.where}: {what}, got {got!r}")

        v = self.value
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            bad(f"{self.statistic}: a finite number", v)
        spread = "deviation" in self.statistic or self.statistic.endswith("_sd_us")
        if self.statistic in WHOLE_US_STATISTICS:
            if v < 0:  # 0 is real here: a round trip to itself, or a rank that kept none
                bad(f"{self.statistic}: a time >= 0 us", v)
        elif self.statistic.endswith("_us") and not spread:
            if v <= 0:  # a message takes time: 0.00 is a tool's rounding of nothing real
                bad(f"{self.statistic}: a time > 0 us", v)
        elif v < 0:
            bad(f"{self.statistic}: a value >= 0", v)
        for f, low in (("ranks", 1), ("ranks_per_node", 1), ("repetitions", 1), ("trials", 1),
                       ("size", 0), ("reply_size", 0), ("rank", 0)):
            x = getattr(self, f)
            if x is None:
                continue
            if isinstance(x, bool) or not isinstance(x, int):
                bad(f"{f}: an integer", x)
            if not low <= x <= bounds.INT32_MAX:
                bad(f"{f}: an integer from {low} to {bounds.INT32_MAX}", x)
        if self.rank is not None and self.rank >= self.ranks:
            bad(f"rank: below ranks ({self.ranks})", self.rank)

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"


def fail(source: str, line: int, expected: str, got: str | None = None) -> InputError:
    """The one-line error of a malformed file: file, line, what was expected."""
    seen = "" if got is None else f", got {got.strip()[:60]!r}"
    if got is not None and not got.strip():
        seen = ", got an empty line"
    return InputError(f"{source}:{line}: expected {expected}{seen}")
