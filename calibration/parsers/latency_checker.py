"""latency_checker's standard output (process.c), ranks' lines in any order.

    Rank 0 -> message size: 4000 bytes (-message-size 4000) exchanges: 100000 (-exchanges 100000)
    Rank R -> mode roundtrip latency: M microseconds, average roundtrip latency: A microseconds
    Rank 0 -> average of average roundtrip latencies: X microseconds

The request and the reply are both message-size bytes; 'Initialized process with rank
R (size is N)' gives the rank count, else the per-rank lines do. The last line is what
a truncated run lacks.

Below 8 bytes the last line is not the ranks' mean: each rank sends its average (a
double) to rank 0 in a message of message-size bytes (process.c, get_result), and rank 0
reads 8 bytes from what arrived (get_result_reply), so at -message-size 0 it prints
0.000000 whatever the ranks measured. The average of averages is then taken from the
per-rank lines, as rank 0 would have computed it (their mean, zeros included).
"""
from __future__ import annotations

import re

from ..measurement import Measurement, fail

HEADER = re.compile(r"^Rank 0 -> message size: (?P<size>\d+) bytes \(-message-size \d+\)"
                    r" exchanges: (?P<ex>\d+) \(-exchanges \d+\)\s*$")
PER_RANK = re.compile(r"^Rank (?P<rank>\d+) -> mode roundtrip latency: (?P<mode>-?\d+) "
                      r"microseconds, average roundtrip latency: (?P<avg>\S+) microseconds\s*$")
FINAL = re.compile(r"^Rank 0 -> average of average roundtrip latencies: (?P<x>\S+) microseconds\s*$")
SIZE = re.compile(r"^Initialized process with rank \d+ \(size is (?P<n>\d+)\)")
_ANY = re.compile(r"^Rank \d+ -> ")
# The bytes of the average each rank sends rank 0 (a C double), of which only
# message-size bytes travel.
DOUBLE_BYTES = 8


def detect(lines: list[str]) -> bool:
    return any(_ANY.match(l) and ("message size" in l or "roundtrip" in l) for l in lines[:200])


def parse(lines: list[str], source: str) -> list[Measurement]:
    header = final = None
    size_n = None
    per_rank: dict[int, tuple[int, float, int]] = {}
    for i, text in enumerate(lines, start=1):
        if m := HEADER.match(text):
            header = (int(m["size"]), int(m["ex"]), i)
        elif m := PER_RANK.match(text):
            rank = int(m["rank"])
            if rank in per_rank:
                raise fail(source, i, f"one result line for rank {rank}", text)
            per_rank[rank] = (int(m["mode"]), _num(m["avg"], source, i, text), i)
        elif m := FINAL.match(text):
            final = (_num(m["x"], source, i, text), i)
        elif m := SIZE.match(text):
            size_n = int(m["n"])
        elif _ANY.match(text):
            raise fail(source, i, "a latency_checker result line "
                                  "('Rank R -> mode roundtrip latency: ...')", text)
    end = len(lines)
    if header is None:
        raise fail(source, end, "the 'Rank 0 -> message size: ...' line")
    if final is None:
        raise fail(source, end, "the final 'Rank 0 -> average of average roundtrip "
                                "latencies: X microseconds' line (truncated run?)")
    ranks = size_n if size_n is not None else len(per_rank)
    if not per_rank:
        raise fail(source, end, "a result line per rank ('Rank R -> mode roundtrip latency: "
                                "M microseconds, average roundtrip latency: A microseconds')")
    if sorted(per_rank) != list(range(ranks)):
        missing = sorted(set(range(ranks)) - set(per_rank))
        raise fail(source, end, f"a result line for each of {ranks} ranks (missing "
                                f"{', '.join(map(str, missing)) or 'none'}; extra "
                                f"{', '.join(str(r) for r in per_rank if r >= ranks) or 'none'})")
    size, exchanges, _ = header
    common = dict(tool="latency_checker", workload="roundtrip", ranks=ranks, size=size,
                  source=source, repetitions=exchanges, reply_size=size)
    average = final[0] if size >= DOUBLE_BYTES else sum(a for _, a, _ in per_rank.values()) / ranks
    out = [Measurement(statistic="lc_average_of_averages_us", value=average, line=final[1],
                       **common)]
    for rank in sorted(per_rank):
        mode, avg, line = per_rank[rank]
        out.append(Measurement(statistic="lc_mode_us", value=float(mode), line=line, rank=rank,
                               **common))
        out.append(Measurement(statistic="lc_mean_us", value=avg, line=line, rank=rank, **common))
    return out


def _num(word, source, line, text) -> float:
    from ._numbers import number
    return number(word, source, line, text)
