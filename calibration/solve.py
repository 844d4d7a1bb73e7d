"""Root finding over the engine: the one place a platform value is solved for a target.

Used by the calibration fitters (a pass cost from a measured round trip) and by
hopsim.platforms.derive (preset values from published figures).
"""
from __future__ import annotations

from scipy.optimize import bisect, brentq

from ..errors import InputError


def solve(f, target: float, lo: float, hi: float, xtol: float, what: str,
          method: str = "brentq") -> float:
    """x in [lo, hi] with f(x) = target, f monotone (either way), by Brent's method or,
    with method="bisect", by bisection (scipy's both).

    A simulated statistic binned in whole microseconds is a step function of a platform
    value: different root finders then stop on different steps, all within xtol of a
    crossing. Bisection is what reproduces numbers fitted by bisection before.

    InputError naming `what` when the target lies outside [f(lo), f(hi)]: the model
    cannot reach the measured value with this parameter alone.
    """
    f_lo, f_hi = f(lo), f(hi)
    if not min(f_lo, f_hi) <= target <= max(f_lo, f_hi):
        raise InputError(f"{what}: target {target:.6g} is outside [{f_lo:.6g}, {f_hi:.6g}], "
                         f"what the model gives over [{lo}, {hi}]")
    if f_lo == target:
        return lo
    if f_hi == target:
        return hi
    finder = {"brentq": brentq, "bisect": bisect}[method]
    return finder(lambda x: f(x) - target, lo, hi, xtol=xtol)
