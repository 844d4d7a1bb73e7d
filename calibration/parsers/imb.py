"""IMB-MPI1 output: every '# Benchmarking X' block, each '#processes = N' block apart.

    #----------------------------------------------------------------
    # Benchmarking Exchange
    # #processes = 4
    #----------------------------------------------------------------
           #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]   Mbytes/sec
                0         1000         2.31         2.45         2.38         0.00

PingPong and PingPing print one time column (t[usec]); the others t_min, t_max and
t_avg over the ranks; Barrier has no #bytes column. Columns are read from each block's
own header line, so a release that adds or drops one still parses.

When a benchmark exceeds its time limit (-time X times the number of sizes), IMB prints
'<bytes> time-out.; Time limit ...' in place of that size's row and measures no larger
size of the block: that row is no measurement and is skipped.
"""
from __future__ import annotations

import re

from ..measurement import Measurement, fail
from ._numbers import integer, number

BENCHMARKING = re.compile(r"^#\s*Benchmarking\s+(?P<name>\S+)\s*$")
PROCESSES = re.compile(r"^#\s*#processes\s*=\s*(?P<n>\d+)\s*$")
_COLUMNS = {"#bytes": "bytes", "#repetitions": "repetitions", "t[usec]": "t_us",
            "t_min[usec]": "t_min_us", "t_max[usec]": "t_max_us", "t_avg[usec]": "t_avg_us",
            "mbytes/sec": "mbytes_per_sec", "msg/sec": "messages_per_sec"}
# IMB benchmarks hopsim has a workload for.
_WORKLOAD = {"PingPong": "pingpong", "Exchange": "exchange"}
TIME_OUT = re.compile(r"^\d+\s+time-out\.")


def detect(lines: list[str]) -> bool:
    return any("Intel(R) MPI Benchmarks" in l or BENCHMARKING.match(l) for l in lines[:400])


def parse(lines: list[str], source: str) -> list[Measurement]:
    out: list[Measurement] = []
    name = ranks = columns = None
    rows_in_block = 0
    version = ""
    for i, text in enumerate(lines, start=1):
        if "Intel(R) MPI Benchmarks" in text:
            m = re.search(r"Benchmarks\s+(\S+)", text)
            version = m[1] if m else ""
        if m := BENCHMARKING.match(text):
            _close(name, ranks, columns, rows_in_block, source, i)
            name, ranks, columns, rows_in_block = m["name"], None, None, 0
            continue
        if name is None:
            continue
        if m := PROCESSES.match(text):
            if ranks is not None:
                raise fail(source, i, "one '#processes' line per block", text)
            ranks = int(m["n"])
            continue
        stripped = text.strip()
        if stripped.startswith(("#bytes", "#repetitions")):
            if ranks is None:
                raise fail(source, i, f"'# #processes = N' before the {name} table", text)
            columns = _header(stripped, source, i)
            continue
        if not stripped or stripped.startswith("#"):
            continue
        if columns is None:
            raise fail(source, i, f"the {name} column header (#bytes #repetitions ...)", text)
        if TIME_OUT.match(stripped):
            continue
        fields = stripped.split()
        if len(fields) != len(columns):
            raise fail(source, i, f"{len(columns)} columns ({' '.join(columns)})", text)
        row = {}
        for col, word in zip(columns, fields):
            if col in ("bytes", "repetitions"):
                row[col] = integer(word, source, i, text, f"an integer {col}")
            else:
                row[col] = number(word, source, i, text, f"a number for {col}")
        rows_in_block += 1
        workload = _WORKLOAD.get(name, name.lower())
        for col in columns:
            if col in ("bytes", "repetitions"):
                continue
            out.append(Measurement("imb", workload, ranks, row.get("bytes", 0), col, row[col],
                                   source, i, repetitions=row.get("repetitions"), version=version))
    _close(name, ranks, columns, rows_in_block, source, len(lines))
    if not out:
        raise fail(source, len(lines), "at least one '# Benchmarking' block with rows",
                   lines[-1] if lines else "")
    return out


def _close(name, ranks, columns, rows, source, line):
    # A block that announced itself but printed no table is a truncated file.
    if name is not None and rows == 0:
        raise fail(source, line, f"the rows of the {name} block"
                   + (f" (#processes = {ranks})" if ranks else ""))


def _header(text: str, source: str, line: int) -> list[str]:
    words = text.split()
    # IMB always prints #repetitions; a transcribed published figure may lack it (its
    # rows then carry no count, and a replay uses validate's own).
    if any(w.lower() not in _COLUMNS for w in words) or len(words) < 2:
        raise fail(source, line, "IMB column names (#bytes #repetitions t[usec] ...)", text)
    return [_COLUMNS[w.lower()] for w in words]
