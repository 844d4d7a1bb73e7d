"""Per-size breakpoints of a time-versus-size curve: segmented least squares.

A ping-pong time t(s) is piecewise linear in the message size: a protocol switch
(eager to rendezvous) shows as a jump at a size, a token bucket (burst at the link rate,
then the sustained rate) as a change of slope without a jump. segments() finds the
breakpoints by exact segmented regression (every split of the sorted sizes into 1 to
max_segments runs of at least min_points, each run a linear least-squares fit on
relative residuals, the count chosen by BIC) and classify() names each breakpoint.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar


@dataclass(frozen=True)
class Segment:
    first_bytes: int
    last_bytes: int
    intercept_us: float
    slope_us_per_byte: float
    rms_rel: float      # root mean square of (fit - t) / t over the segment's points
    points: int

    def at(self, s: float) -> float:
        return self.intercept_us + self.slope_us_per_byte * s

    @property
    def bandwidth_gbps(self) -> float:
        return 8e-3 / self.slope_us_per_byte if self.slope_us_per_byte > 0 else math.inf


@dataclass(frozen=True)
class Breakpoint:
    below_bytes: int    # last size of the lower segment
    above_bytes: int    # first size of the upper segment
    jump_us: float      # upper minus lower fit, at above_bytes
    kind: str           # "protocol" (a jump) or "rate" (a slope change only)


RESOLUTION = 1e-4
# Slopes within this factor of each other are one rate (a jump between them is a protocol).
SAME_RATE = 1.5


def _visible(seg: "Segment") -> bool:
    """The segment's slope is a rate: serialisation is a tenth of its time at least."""
    end = seg.at(seg.last_bytes)
    return seg.slope_us_per_byte > 0 and end > 0 and seg.slope_us_per_byte * seg.last_bytes >= 0.1 * end


class _Runs:
    """Relative least-squares lines over any run s[i:j] in O(1), from prefix sums.

    Minimises sum(((a + b x) w - 1)^2) with w = 1/t and x = s / scale (scaled so that
    the normal equations stay well conditioned up to 4 MiB sizes)."""

    def __init__(self, s: np.ndarray, t: np.ndarray):
        self.scale = float(max(np.max(s), 1.0))
        x, w = s / self.scale, 1.0 / t
        cols = [w, x * w, w * w, x * w * w, x * x * w * w, np.ones_like(w)]
        self.c = [np.concatenate([[0.0], np.cumsum(c)]) for c in cols]

    def fit(self, i: int, j: int) -> tuple[float, float, float]:
        """(intercept, slope per byte, sum of squared relative residuals) of s[i:j]."""
        sw, sxw, sww, sxww, sxxww, n = (c[j] - c[i] for c in self.c)
        det = sww * sxxww - sxww * sxww
        if j - i < 2 or det <= 1e-12 * sww * sxxww:
            a, b = sw / sww, 0.0   # one size (or repeats of one): a constant
        else:
            a = (sw * sxxww - sxw * sxww) / det
            b = (sww * sxw - sxww * sw) / det
        sse = n - 2 * (a * sw + b * sxw) + a * a * sww + 2 * a * b * sxww + b * b * sxxww
        return float(a), float(b) / self.scale, max(float(sse), 0.0)


def segments(sizes, times, max_segments: int = 3, min_points: int = 4) -> list[Segment]:
    """The BIC-best split of the curve into up to max_segments linear pieces."""
    s = np.asarray(sizes, dtype=float)
    t = np.asarray(times, dtype=float)
    order = np.argsort(s, kind="stable")
    s, t = s[order], t[order]
    runs = _Runs(s, t)
    # Breaks only between distinct sizes (repeated sizes are trials of one case).
    cuts = [i for i in range(1, len(s)) if s[i] != s[i - 1]]
    n = len(s)
    best = None
    for k in range(1, max_segments + 1):
        for chosen in itertools.combinations(cuts, k - 1):
            bounds = (0,) + chosen + (n,)
            if any(b - a < min_points for a, b in zip(bounds, bounds[1:])):
                continue
            fits = [runs.fit(a, b) for a, b in zip(bounds, bounds[1:])]
            sse = sum(f[2] for f in fits)
            params = 3 * k - 1   # two per line, one per breakpoint
            # Residuals below 0.01% are below what the tools print (two decimals): a
            # floor keeps exact data from buying segments with rounding noise.
            bic = n * math.log(max(sse / n, RESOLUTION**2)) + params * math.log(n)
            if best is None or bic < best[0] - 1e-9:
                best = (bic, bounds, fits)
    if best is None:
        raise ValueError(f"at least {min_points} points are needed, got {n}")
    _, bounds, fits = best
    return [Segment(int(s[a]), int(s[b - 1]), a_, b_, math.sqrt(sse / (b - a)), b - a)
            for (a, b), (a_, b_, sse) in zip(zip(bounds, bounds[1:]), fits)]


def classify(segs: list[Segment], jump_rel: float = 0.10) -> list[Breakpoint]:
    """Name each breakpoint. If the two lines cross between the last lower size and the
    first upper one, the curve is continuous there and only its slope changed: a rate
    change such as a token bucket. Otherwise the gap between the lines is a jump; a jump
    above jump_rel of the time (and three times the segments' scatter) with the same
    rate on both sides (within SAME_RATE) is a protocol switch, anything else a rate
    change."""
    out = []
    for lo, hi in zip(segs, segs[1:]):
        below, above = lo.last_bytes, hi.first_bytes
        d_below, d_above = hi.at(below) - lo.at(below), hi.at(above) - lo.at(above)
        if d_below * d_above <= 0:
            out.append(Breakpoint(below, above, 0.0, "rate"))
            continue
        jump = d_below if abs(d_below) < abs(d_above) else d_above
        scatter = 3 * max(lo.rms_rel, hi.rms_rel)
        rel = jump / max(lo.at(below), 1e-12)
        kind = "protocol" if rel > max(jump_rel, scatter) else "rate"
        # A protocol switch adds a constant (a handshake) and keeps the wire's rate; where
        # both slopes are measured rates and differ by half or more, the rate changed.
        if kind == "protocol" and _visible(lo) and _visible(hi):
            ratio = hi.slope_us_per_byte / lo.slope_us_per_byte
            if not 1 / SAME_RATE <= ratio <= SAME_RATE:
                kind = "rate"
        out.append(Breakpoint(below, above, jump, kind))
    return out


@dataclass(frozen=True)
class Hinge:
    """t(s) = a + s u for s <= h, a + h u + (s - h) v above: one continuous curve whose
    slope changes at h, as a token bucket's burst-then-sustained ping-pong does."""
    intercept_us: float
    slope_below: float      # us per byte
    slope_above: float
    at_bytes: float
    rms_rel: float


def _hinge_at(s: np.ndarray, t: np.ndarray, h: float):
    # Linear in (a, u, v) once h is fixed: relative least squares, rows divided by t.
    A = np.column_stack([np.ones_like(s), np.minimum(s, h), np.maximum(s - h, 0.0)]) / t[:, None]
    coef, *_ = np.linalg.lstsq(A, np.ones_like(s), rcond=None)
    r = A @ coef - 1.0
    return coef, float(r @ r)


def hinge(sizes, times, first: int, last: int) -> Hinge | None:
    """The continuous two-slope curve through the points sized first..last, its bend h
    free: a scan of every interval between consecutive sizes, h refined in each by a
    bounded scalar minimisation of the relative residuals. Two independently fitted lines
    cross where their intercepts put them, and an intercept far from zero is a noisy
    extrapolation; the bend of one curve through both is fixed by the points near it.
    None if there are not two sizes on each side or the slope does not rise."""
    s = np.asarray(sizes, dtype=float)
    t = np.asarray(times, dtype=float)
    keep = (s >= first) & (s <= last) & (t > 0)
    s, t = s[keep], t[keep]
    distinct = np.unique(s)
    if len(distinct) < 4:
        return None
    best = None
    for lo_s, hi_s in zip(distinct[1:-2], distinct[2:-1]):
        m = minimize_scalar(lambda h: _hinge_at(s, t, h)[1], bounds=(lo_s, hi_s),
                            method="bounded", options={"xatol": 1e-6 * hi_s})
        for h in (lo_s, float(m.x), hi_s):
            coef, sse = _hinge_at(s, t, h)
            if best is None or sse < best[0] - 1e-15:
                best = (sse, h, coef)
    sse, h, (a, u, v) = best
    if not (u > 0 and v > u):
        return None
    return Hinge(float(a), float(u), float(v), float(h), math.sqrt(sse / len(s)))
