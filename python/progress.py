"""A progress bar on a terminal for the runs the engine owns (simulate, topology).

The engine reports the fraction of a run done through a callback (hopsim._engine.simulate's
and Overlay.statistics' `progress`, at most every 0.2 s and 1.0 at the end); this module
draws it with tqdm on stderr, only when stderr is a terminal and only once the run has
taken DELAY_S seconds, so a short run and anything read through a pipe see nothing. The
bar is erased when the run ends (or is interrupted), leaving the output as it was.

HOPSIM_PROGRESS_DELAY=SECONDS changes the delay (0: from the start; the pty tests use it).
"""
from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager

DELAY_S = 1.0
STEPS = 1000  # the bar's resolution: a tenth of a percent


def _delay() -> float:
    try:
        value = float(os.environ.get("HOPSIM_PROGRESS_DELAY", DELAY_S))
    except ValueError:
        return DELAY_S
    return value if 0 <= value < 1e6 else DELAY_S


def on_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # replaced or closed streams
        return False


@contextmanager
def bar(what: str):
    """Yields progress(fraction) drawing a bar labelled `what`, or None when stderr is not
    a terminal (the engine then skips the calls altogether)."""
    stream = sys.stderr
    if not on_terminal(stream):
        yield None
        return
    from tqdm import tqdm

    tqdm.monitor_interval = 0  # no monitor thread
    delay, start = _delay(), time.monotonic()
    shown = tqdm(total=STEPS, desc=what, file=stream, delay=delay, leave=False,
                 mininterval=0.2, dynamic_ncols=True,
                 bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed} elapsed, {remaining} left")

    def progress(fraction: float) -> None:
        # IMB's time rule can shorten a size after its first repetition: never step back.
        step = min(STEPS, max(0, round(fraction * STEPS)))
        if step > shown.n:
            shown.update(step - shown.n)
        if step == STEPS and time.monotonic() - start >= delay:
            shown.refresh()  # the end drawn, not skipped by tqdm's own 0.2 s throttle

    try:
        yield progress
    finally:
        shown.close()
