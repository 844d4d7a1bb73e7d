"""NetPIPE's -o file: one line per message size, no header.

NetPIPE 3.7 (Debian's NPopenmpi):  bytes  Mbps  seconds
    '%8d %lf %12.8lf': the time is one way (half the ping-pong), and "Mbps" is
    bits / (seconds * 2^20), a binary megabit (netpipe.c: bps = bits / (t*1024*1024)).
NetPIPE 5:  bytes  avg_Gbps  min_Gbps  max_Gbps  avg_usec
    '%9d %9.3lf %9.3lf %9.3lf %7.2lf': avg_usec is one way too (t /= 2 unless
    streaming or bidirectional), the mean over the trials.
Sizes come with NetPIPE's perturbations (n-3, n, n+3); each line is one case.

Neither file prints how many round trips a line took. For 3.7 its source's rule gives it:
each size runs TRIALS = 3 trials of nrepeat = max(RUNTM / (b / (b - inc + 1) x tlast), 3)
round trips, RUNTM = 0.25 s and tlast the previous size's time; the line's repetitions are
3 x RUNTM / tlast, leaving out the increment factor (between 1 and 2, so at most twice
NetPIPE's count). It matters where the time depends on what came before (a token bucket
drained by thousands of small messages, docs/validation.md).
"""
from __future__ import annotations

from ..measurement import Measurement, fail
from ._numbers import integer, number

_LAYOUTS = {3: "3.7", 5: "5"}
# NetPIPE 3.7 (netpipe.c): seconds of round trips per trial, and trials per size.
RUNTM, TRIALS = 0.25, 3


def _rows(lines):
    return [(i, l.split()) for i, l in enumerate(lines, start=1) if l.strip()]


def detect(lines: list[str]) -> bool:
    rows = _rows(lines[:50])
    if not rows or len(rows[0][1]) not in _LAYOUTS:
        return False
    try:
        [float(w) for w in rows[0][1]]
    except ValueError:
        return False
    return rows[0][1][0].isdigit()


def parse(lines: list[str], source: str) -> list[Measurement]:
    rows = _rows(lines)
    width = len(rows[0][1])
    version = _LAYOUTS[width]
    expected = ("'bytes Mbps seconds' (NetPIPE 3.7)" if width == 3 else
                "'bytes avg_Gbps min_Gbps max_Gbps avg_usec' (NetPIPE 5)")
    out = []
    last_s = None
    for i, fields in rows:
        text = lines[i - 1]
        if len(fields) != width:
            raise fail(source, i, expected, text)
        size = integer(fields[0], source, i, text, "a message size in bytes")
        values = [number(w, source, i, text) for w in fields[1:]]
        reps = None
        if width == 3:
            stats = {"latency_us": values[1] * 1e6, "bandwidth_mbps_binary": values[0]}
            tlast = last_s if last_s else values[1]
            if tlast > 0:
                reps = TRIALS * max(int(RUNTM / tlast), TRIALS)
            last_s = values[1]
        else:
            stats = {"latency_us": values[3], "bandwidth_gbps": values[0],
                     "min_bandwidth_gbps": values[1], "max_bandwidth_gbps": values[2]}
        for name, value in stats.items():
            out.append(Measurement("netpipe", "pingpong", 2, size, name, value, source, i,
                                   repetitions=reps, version=version))
    return out
