"""Cross-validation: fit on some files, predict the others with `hopsim validate`'s code.

    from hopsim.calibration.holdout import predict, leave_one_out
    table = predict(platform, ["imb-4hosts.txt"], ranks_per_node=None)
    table.text(), table.median_over_files()

A held-out file's cases are simulated exactly as validate simulates them (its caps, not
the fit's), so the numbers printed are the ones `hopsim validate` would print.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from ..errors import InputError
from . import file_placement
from .validate import Case, _short, cases_of, simulate_cases


@dataclass
class Prediction:
    file: str
    cases: list[Case]

    @property
    def median_abs_error_pct(self) -> float:
        return statistics.median(abs(c.error_pct) for c in self.cases if c.error_pct is not None)


@dataclass
class HoldoutTable:
    predictions: list[Prediction] = field(default_factory=list)
    title: str = "held out"
    # (file, why): leave-one-out folds whose remaining files could not be fitted.
    unfitted: list[tuple[str, str]] = field(default_factory=list)

    def median_over_files(self) -> float | None:
        m = [p.median_abs_error_pct for p in self.predictions]
        return statistics.median(m) if m else None

    def text(self, per_case: bool = True) -> str:
        lines = [f"{self.title}: measured vs predicted"]
        if per_case:
            lines.append(f"  {'file':<28} {'workload':<9} {'ranks':>5} {'rpn':>3} {'bytes':>9} "
                         f"{'measured_us':>12} {'predicted_us':>12} {'error_%':>8}")
            for p in self.predictions:
                for c in p.cases:
                    lines.append(f"  {_short(c.file):<28} {c.workload:<9} {c.ranks:>5} "
                                 f"{c.ranks_per_node:>3} {c.bytes:>9} {c.measured_us:>12.3f} "
                                 f"{c.simulated_us:>12.3f} {c.error_pct:>+8.1f}")
        lines.append(f"  {'file':<60} {'cases':>5} {'median |error| %':>16}")
        for p in self.predictions:
            lines.append(f"  {p.file:<60} {len(p.cases):>5} {p.median_abs_error_pct:>16.1f}")
        for f, why in self.unfitted:
            lines.append(f"  {f:<60} not predicted: the other files cannot be fitted ({why})")
        if self.predictions:
            lines.append(f"  median over files: {self.median_over_files():.1f}%")
        return "\n".join(lines) + "\n"


def held_cases(f, ranks_per_node=None, placement=None) -> list[Case]:
    """The cases of one held-out file, or the one-line error that it has none."""
    cases, _ = cases_of(*file_placement.read([f], ranks_per_node, placement))
    if not cases:
        raise InputError(f"--holdout: {f} holds no case hopsim simulates")
    return cases


def check(files, ranks_per_node=None, placement=None) -> None:
    """Every held-out file read before the fit, so that a bad one fails in a second, not
    after a fit of half an hour."""
    for f in files:
        held_cases(f, ranks_per_node, placement)


def predict(platform, files, ranks_per_node=None, seed: int = 1, placement=None) -> HoldoutTable:
    """Every case of every file simulated on platform, per file (placement: as validate's,
    for files that record none)."""
    table = HoldoutTable()
    for f in files:
        cases = held_cases(f, ranks_per_node, placement)
        simulate_cases(platform, cases, seed)
        table.predictions.append(Prediction(f, cases))
    return table


def split(files, holdout) -> list[str]:
    """FILES without the held-out ones; a file given in both places is fitted on nothing."""
    held = set(holdout)
    rest = [f for f in files if f not in held]
    if not rest:
        raise InputError("--holdout: every file is held out; nothing is left to fit on")
    return rest
