"""Number fields shared by the parsers: a bad word is a one-line error at its line."""
from __future__ import annotations

import math

from ..measurement import fail


def integer(word: str, source: str, line: int, text: str, what: str = "an integer") -> int:
    if not word.isdigit():
        raise fail(source, line, what, text)
    return int(word)


def number(word: str, source: str, line: int, text: str, what: str = "a number") -> float:
    try:
        v = float(word)
    except ValueError:
        raise fail(source, line, what, text) from None
    if not math.isfinite(v):
        raise fail(source, line, f"{what} (finite)", text)
    return v
