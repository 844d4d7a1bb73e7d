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
    if method == "brentq":
        return brentq(lambda x: f(x) - target, lo, hi, xtol=xtol)
    if method != "bisect":
        raise ValueError(f"method: brentq or bisect, got {method!r}")
    # scipy's bisect returns its last midpoint; the centre of the final bracket (half a
    # step further, towards the side the last midpoint excluded) is the better estimate
    # and the value the presets were fitted with. f(root) is cached, not re-simulated.
    seen = {}

    def g(x):
        if x not in seen:
            seen[x] = f(x) - target
        return seen[x]

    root, info = bisect(g, lo, hi, xtol=xtol, full_output=True, disp=False)
    if g(root) == 0:
        return root
    step = (hi - lo) / 2 ** info.iterations
    rising = f_hi > f_lo
    return root + step / 2 if (g(root) < 0) == rising else root - step / 2
