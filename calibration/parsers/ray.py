"""Ray's NetworkTest.txt (code/NetworkTest/NetworkTest.cpp).

    # average and mode round trip latency in microseconds (10^-6 seconds) when requesting a reply for a message of 4000 bytes
    # MessagePassingInterfaceRank	Name	ModeLatencyInMicroseconds	AverageLatencyInMicroseconds	NumberOfExchanges
    # AverageForAllRanks: X
    # StandardDeviation: Y
    rank	name	mode	avg	n

A rank without data is written 'rank<TAB>name<TAB>LATENCY_INFORMATION_NOT_AVAILABLE'
twice with no separator between them (the source's quirk), then its count. The reply
is empty (0 bytes) in the Ray releases this reads.
"""
from __future__ import annotations

import re

from ..measurement import Measurement, fail
from ._numbers import integer, number

TITLE = re.compile(r"^# average and mode round trip latency in microseconds .* message of "
                   r"(?P<size>\d+) bytes\s*$")
AVERAGE = re.compile(r"^# AverageForAllRanks: (?P<x>\S+)\s*$")
SD = re.compile(r"^# StandardDeviation: (?P<x>\S+)\s*$")
NA = "LATENCY_INFORMATION_NOT_AVAILABLE"


def detect(lines: list[str]) -> bool:
    return bool(lines) and TITLE.match(lines[0]) is not None


def parse(lines: list[str], source: str) -> list[Measurement]:
    size = int(TITLE.match(lines[0])["size"])
    average = sd = None
    rows = []
    for i, text in enumerate(lines[1:], start=2):
        if m := AVERAGE.match(text):
            average = (number(m["x"], source, i, text), i)
        elif m := SD.match(text):
            sd = (number(m["x"], source, i, text), i)
        elif text.startswith("#") or not text.strip():
            continue
        else:
            rows.append((i, text))
    if average is None or sd is None:
        raise fail(source, len(lines), "the '# AverageForAllRanks:' and '# StandardDeviation:' lines")
    per_rank = []
    for expected_rank, (i, text) in enumerate(rows):
        fields = text.rstrip("\n").split("\t")
        if len(fields) == 4 and fields[2] == NA * 2:
            fields = fields[:2] + [NA, NA, fields[3]]
        if len(fields) != 5:
            raise fail(source, i, "'rank<TAB>name<TAB>mode<TAB>average<TAB>exchanges'", text)
        rank = integer(fields[0], source, i, text, "a rank number")
        if rank != expected_rank:
            raise fail(source, i, f"rank {expected_rank}", text)
        n = integer(fields[4], source, i, text, "a number of exchanges")
        if fields[2] == NA:
            continue
        mode = integer(fields[2], source, i, text, "a whole-microsecond mode")
        mean = integer(fields[3], source, i, text, "a whole-microsecond average")
        per_rank.append((rank, mode, mean, n, i))
    if not rows:
        raise fail(source, len(lines), "one line per rank after the header")
    exchanges = rows and int(rows[0][1].split("\t")[-1])
    common = dict(tool="ray", workload="roundtrip", ranks=len(rows), size=size, source=source,
                  repetitions=exchanges, reply_size=0)
    out = [Measurement(statistic="ray_average_for_all_ranks_us", value=average[0],
                       line=average[1], **common),
           Measurement(statistic="ray_standard_deviation_us", value=sd[0], line=sd[1], **common)]
    for rank, mode, mean, n, i in per_rank:
        out.append(Measurement(statistic="ray_mode_us", value=float(mode), line=i, rank=rank,
                               **common))
        out.append(Measurement(statistic="ray_mean_us", value=float(mean), line=i, rank=rank,
                               **common))
    return out
