"""Parsers of real benchmark outputs -> Measurement lists, the format found from content.

    from hopsim.calibration.parsers import parse_file, parse_text
    measurements = parse_file("osu_latency.txt")          # list[Measurement]
    fmt = detect_format(text)                              # "osu", "imb", ... or None

A file no parser recognises, or one a parser finds malformed or truncated, raises
InputError with one line: the file, the line number and what was expected there.
"""
from __future__ import annotations

from pathlib import Path

from ...errors import InputError
from ..measurement import Measurement
from . import hopsim_json, imb, latency_checker, netpipe, osu, ray

# Order matters only where two formats could both match; the tests check that none do
# on the real files.
FORMATS = {"hopsim-json": hopsim_json, "osu": osu, "imb": imb, "ray": ray,
           "latency_checker": latency_checker, "netpipe": netpipe}


def detect_format(text: str) -> str | None:
    lines = text.splitlines()
    for name, module in FORMATS.items():
        if module.detect(lines):
            return name
    return None


def parse_text(text: str, source: str, fmt: str | None = None) -> list[Measurement]:
    """The measurements in text (the content of source, named in messages)."""
    lines = text.splitlines()
    if not any(l.strip() for l in lines):
        raise InputError(f"{source}:1: expected a benchmark output, got an empty file")
    fmt = fmt or detect_format(text)
    if fmt is None:
        raise InputError(f"{source}:1: expected the output of osu_latency, osu_bw, IMB-MPI1, "
                         f"NetPIPE (-o file), latency_checker, Ray's NetworkTest.txt or "
                         f"hopsim --json; recognised none")
    if fmt not in FORMATS:
        raise InputError(f"format: must be one of {', '.join(FORMATS)}, got {fmt!r}")
    return FORMATS[fmt].parse(lines, source)


def parse_file(path: str | Path) -> list[Measurement]:
    """The measurements of a regular file of at most bounds.MAX_MEASUREMENT_BYTES (16 MiB)."""
    from ... import bounds

    text = bounds.read_text(path, "measurement file", bounds.MAX_MEASUREMENT_BYTES)
    return parse_text(text, str(path))


__all__ = ["Measurement", "FORMATS", "detect_format", "parse_file", "parse_text"]
