"""What a fitted platform does not explain in the files it was fitted to.

A joint fit's median error can be small while one workload's sizes are missed the same
way in every trial: a mechanism the files show and the model does not have (on the
emulated rigs, IMB Exchange's large sizes on 2 hosts, where Open MPI's rendezvous lets
the second message of a pair wait for the first: docs/calibration.md). Noise moves
trials apart; a missing mechanism moves them together. So a run of sizes is reported
when, in one series (tool, workload, ranks, placement, statistic), every trial at each of
its sizes misses by more than LIMIT_PCT with the same sign, over at least MIN_SIZES
consecutive sizes (one size is enough where the series has only one and 2+ trials, as
latency_checker's). Predictions that lean on those cases are less certain than the fit's
median error says; the report names them instead of averaging them away.
"""
from __future__ import annotations

from collections import defaultdict
from itertools import groupby

LIMIT_PCT = 10.0
MIN_SIZES = 2


def _series(c) -> tuple:
    placed = c.run.get("placement", "block")
    return (c.tool, c.workload, c.ranks, c.ranks_per_node,
            placed if isinstance(placed, str) else "mapped", c.statistic)


def _label(series: tuple) -> str:
    tool, workload, ranks, per_node, placed, statistic = series
    placed = "" if placed == "block" else f", {placed}"
    return f"{tool} {workload} {ranks} ranks ({per_node} per node{placed}) {statistic}"


def _mark(errors: list[float]) -> int:
    """+1 (-1) when every trial is more than LIMIT_PCT slow (fast), else 0."""
    if all(e > LIMIT_PCT for e in errors):
        return 1
    if all(e < -LIMIT_PCT for e in errors):
        return -1
    return 0


def missed_runs(cases, simulated) -> list[dict]:
    """Runs of consecutive sizes that every trial misses the same way by more than
    LIMIT_PCT: one dict per run (series label, sizes, trials, signed errors in %)."""
    by_series: dict[tuple, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for c, s in zip(cases, simulated):
        if s is not None and c.measured_us > 0:
            by_series[_series(c)][c.bytes].append(100.0 * (s - c.measured_us) / c.measured_us)
    runs = []
    for series in sorted(by_series, key=_label):
        errors = by_series[series]
        sizes = sorted(errors)
        for mark, group in groupby(sizes, key=lambda b: _mark(errors[b])):
            run = list(group)
            trials = min(len(errors[b]) for b in run)
            if mark and (len(run) >= MIN_SIZES or (len(sizes) == 1 and trials >= 2)):
                runs.append({"series": _label(series), "sizes": run, "trials": trials,
                             "errors_pct": [e for b in run for e in errors[b]]})
    return runs


def report_lines(cases, simulated) -> list[str]:
    runs = missed_runs(cases, simulated)
    head = (f"not explained by the model (each size missed the same way by more than "
            f"{LIMIT_PCT:.0f}% in every trial, {MIN_SIZES}+ sizes in a row; predictions that "
            f"lean on these cases are less certain than the fit's median error):")
    if not runs:
        return [head + " none"]
    lines = [head]
    for r in runs:
        size = [abs(e) for e in r["errors_pct"]]
        how = "slow" if r["errors_pct"][0] > 0 else "fast"
        span = f"{r['sizes'][0]}..{r['sizes'][-1]} B" if len(r["sizes"]) > 1 else f"{r['sizes'][0]} B"
        lines.append(f"  {r['series']}: {span} ({len(r['sizes'])} size(s) x {r['trials']} "
                     f"trial(s)), the model {min(size):.1f}-{max(size):.1f}% {how}")
    return lines
