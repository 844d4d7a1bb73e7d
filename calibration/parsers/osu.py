"""OSU micro-benchmarks: osu_latency and osu_bw, 5.x and 7.x layouts.

    # OSU MPI Latency Test v5.3.2          # OSU MPI Latency Test v7.4
    # Size          Latency (us)           # Size       Avg Latency(us)   [Min.. Max.. Iterations with -f]
    0                       1.23           0                       1.23

The columns are read from the "# Size" header (5.x names the latency column
"Latency (us)", 7.x "Avg Latency(us)"), so a full-statistics 7.x table parses too.
"""
from __future__ import annotations

import re

from ..measurement import Measurement, fail
from ._numbers import integer as _int_w, number as _float_w

TITLE = re.compile(r"^# OSU MPI(?:-\w+)? (?P<test>.+?) Test(?: v(?P<version>\S+))?\s*$")
_TESTS = {"Latency": ("osu_latency", "pingpong"), "Bandwidth": ("osu_bw", "bandwidth")}
_COLUMNS = {
    "latency (us)": "latency_us", "avg latency(us)": "latency_us",
    "min latency(us)": "min_latency_us", "max latency(us)": "max_latency_us",
    "bandwidth (mb/s)": "bandwidth_mbytes_per_sec", "iterations": "repetitions",
}


def detect(lines: list[str]) -> bool:
    return any(TITLE.match(l) for l in lines[:5])


def parse(lines: list[str], source: str) -> list[Measurement]:
    title_at = next(i for i, l in enumerate(lines[:5]) if TITLE.match(l))
    m = TITLE.match(lines[title_at])
    if m["test"] not in _TESTS:
        raise fail(source, title_at + 1, "an osu_latency or osu_bw title "
                   "('# OSU MPI Latency Test' or '# OSU MPI Bandwidth Test')", lines[title_at])
    tool, workload = _TESTS[m["test"]]
    version = m["version"] or ""
    columns, out = None, []
    for i, text in enumerate(lines[title_at + 1:], start=title_at + 2):
        if not text.strip():
            continue
        if text.startswith("#"):
            if columns is None and text[1:].strip().lower().startswith("size"):
                columns = _header(text, source, i)
            continue
        if columns is None:
            raise fail(source, i, "the '# Size ...' column header before the first row", text)
        fields = text.split()
        if len(fields) != len(columns) + 1:
            raise fail(source, i, f"a size and {len(columns)} number(s) "
                                  f"({', '.join(columns)})", text)
        size = _int_w(fields[0], source, i, text, "a message size in bytes")
        values = [_float_w(f, source, i, text) for f in fields[1:]]
        reps = int(values[columns.index("repetitions")]) if "repetitions" in columns else None
        for name, value in zip(columns, values):
            if name != "repetitions":
                out.append(Measurement(tool, workload, 2, size, name, value, source, i,
                                       repetitions=reps, version=version))
    if not out:
        raise fail(source, len(lines), "at least one '<size> <value>' row after the header",
                   lines[-1] if lines else "")
    return out


def _header(text: str, source: str, line: int) -> list[str]:
    names = [c.strip().lower() for c in re.split(r"\s{2,}", text[1:].strip())][1:]
    if not names or any(n not in _COLUMNS for n in names):
        raise fail(source, line, f"OSU column names ({', '.join(sorted(set(_COLUMNS)))})", text)
    return [_COLUMNS[n] for n in names]

