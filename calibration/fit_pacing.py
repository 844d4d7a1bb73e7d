"""Pacing: a ping-pong curve that steps up after one packet and then climbs at a
connection's own rate.

Over TCP through Linux tbf (measured, docs/model.md "Pacing"), a message that fits one
packet leaves at once, at the link's rate R; a longer one climbs at a rate p far below R,
about twice the tbf's rate, and that rate binds each connection alone, not the link.
Which kernel mechanism spaces the packets was not isolated. The one-way ping-pong time
is then, with the engine's pacing (`network.pacing_gbps`, `pacing_above_bytes` = P)

    t(s) = L + s / R    for s <= P
    t(s) = L + s / p    for s >  P   (while the NIC's token bucket, if any, has tokens)

and, under a token bucket of sustained rate r and depth b, L + (s - b) / r once that is
slower: the paced line and the bucket's line cross at s* = b / (1 - r/p).

The fit: for every split of the sorted sizes into a lower run (2 sizes at least) and an
upper one (4 at least), a line through the lower run (L, R; within 10% rms) and up to two segments
through the upper run (segments.segments: the paced rate, then the bucket's). A split is
a pacing step when the first size above it takes at least STEP times what the lower
line predicts there and the upper rate is at most a third of the lower one; among those,
the one with the smallest squared relative residual wins. The paced line must also pass
near the origin (a drained token bucket's line starts far below it), and the model as
fitted must reproduce the sizes above the step (median miss 10%, the largest size 15%). p is then fitted with L held
(the engine's form L + s/p), robustly (scipy least_squares, soft_l1).
"""
from __future__ import annotations

import math
import statistics

import numpy as np
from scipy.optimize import least_squares

from .segments import Segment, segments

# The first paced size must take at least this multiple of the one-packet line's time.
STEP = 2.0
# The paced rate must be at most this fraction of the one-packet rate.
RATE_DROP = 1 / 3
# The one-packet sizes must lie on their line within this root mean square (relative).
LOWER_RMS = 0.10
# How far below the origin the paced line may start, as a fraction of the first paced time.
ORIGIN = 1.0
# How well the fitted model must reproduce the sizes above the step: their median
# relative miss, and the largest size's.
MODEL_MEDIAN, MODEL_LARGEST = 0.10, 0.15
# The sustained rate must be at least this much slower than the paced one to be a bucket.
BUCKET_DROP = 1 / 1.2


def _line(s: np.ndarray, t: np.ndarray) -> tuple[float, float, float]:
    """(intercept, slope, sum of squared relative residuals): least squares on t/t."""
    w = 1.0 / t
    a = np.vstack([w, s * w]).T
    (c, k), *_ = np.linalg.lstsq(a, np.ones_like(s), rcond=None)
    r = (c + k * s) * w - 1.0
    return float(c), float(k), float(np.sum(r * r))


def _paced_rate(s: np.ndarray, t: np.ndarray, latency_us: float) -> float:
    """p in bytes/us from t = L + s/p with L held, robust to a few mixed rows."""
    def resid(x):
        return (latency_us + s * x[0] - t) / t

    x0 = [max(float(np.median((t - latency_us) / s)), 1e-12)]
    r = least_squares(resid, x0, bounds=([1e-15], [np.inf]), x_scale="jac", loss="soft_l1", f_scale=0.1)
    return 1.0 / float(r.x[0])


class PacingFit:
    """The result: every rate in Gbit/s, sizes in bytes, times in us."""

    def __init__(self, latency_us, line_gbps, paced_gbps, above_bytes, first_paced, lower, upper,
                 bucket_gbps=None, burst_bytes=None, crossing=None):
        self.latency_us, self.line_gbps, self.paced_gbps = latency_us, line_gbps, paced_gbps
        self.above_bytes, self.first_paced = above_bytes, first_paced
        self.lower, self.upper = lower, upper          # sizes in each run
        self.bucket_gbps, self.burst_bytes, self.crossing = bucket_gbps, burst_bytes, crossing

    def at(self, size: float) -> float:
        """The fitted one-way time at `size` of a ping-pong whose bucket refills between
        messages (no noise): L + s/R, L + s/p, then L + (s - b)/r once slower."""
        rate = self.line_gbps if size <= self.above_bytes else self.paced_gbps
        t = self.latency_us + 8e-3 * size / rate
        if self.bucket_gbps is not None and size > self.above_bytes:
            t = max(t, self.latency_us + 8e-3 * (size - self.burst_bytes) / self.bucket_gbps)
        return t

    def describe(self) -> str:
        text = (f"one-packet line over {self.lower[0]}..{self.lower[-1]} B (L, R), a step up to "
                f"{self.first_paced} B, then the paced rate over {self.upper[0]}..{self.upper[-1]} B "
                f"with L held")
        if self.bucket_gbps is not None:
            text += (f"; the slope rises again to {self.bucket_gbps:.4g} Gbit/s (token bucket), the "
                     f"paced and sustained lines crossing at {self.crossing:.0f} B, burst = "
                     f"crossing x (1 - r/p)")
        return text


def fit_pacing(sizes, times) -> tuple[PacingFit | None, str]:
    """The pacing fit of a one-way ping-pong curve (one time per size; repeated sizes are
    trials and are reduced to their median), or None and why not."""
    by_size: dict[int, list[float]] = {}
    for s_, t_ in zip(sizes, times):
        by_size.setdefault(int(s_), []).append(float(t_))
    s = np.array(sorted(by_size), float)
    t = np.array([statistics.median(by_size[int(x)]) for x in s], float)
    if len(s) < 6:
        return None, f"needs ping-pong times at 6 sizes at least, got {len(s)}"
    best = None
    for k in range(2, len(s) - 3):      # lower run s[:k], upper run s[k:]
        c, slope, sse_lo = _line(s[:k], t[:k])
        if slope <= 0 or c <= 0 or sse_lo > k * LOWER_RMS**2:
            continue
        predicted = c + slope * s[k]
        if t[k] < STEP * predicted:
            continue
        try:
            segs = segments(s[k:], t[k:], max_segments=2, min_points=3)
        except ValueError:
            continue
        if not (segs[0].slope_us_per_byte > 0 and segs[0].slope_us_per_byte * RATE_DROP >= slope):
            continue
        # A paced message's time grows from about L in proportion to its size: its line
        # passes near the origin. A drained token bucket's line (L - b/r + s/r) starts
        # far below it: that is a bend, which TokenBucket fits.
        if segs[0].intercept_us < -ORIGIN * t[k]:
            continue
        sse = sse_lo + sum(g.rms_rel ** 2 * g.points for g in segs)
        if best is None or sse < best[0]:
            best = (sse, k, c, slope, segs)
    if best is None:
        return None, ("no step after the small sizes: no size takes "
                      f"{STEP:g}x the small-message line with a rate a third of it or less")
    _, k, c, slope, segs = best
    latency, line_gbps = c, 8e-3 / slope
    paced: Segment = segs[0]
    in_paced = (s >= paced.first_bytes) & (s <= paced.last_bytes)
    p = _paced_rate(s[in_paced], t[in_paced], latency)
    fit = PacingFit(latency, line_gbps, 8e-3 * p, int(s[k - 1]), int(s[k]),
                    [int(x) for x in s[:k]], [int(x) for x in s[in_paced]])
    if len(segs) == 2 and segs[1].slope_us_per_byte * BUCKET_DROP > 1 / p:
        hi = segs[1]
        # L + s/p meets the sustained line a + s/r at s*.
        crossing = (hi.intercept_us - latency) / (1 / p - hi.slope_us_per_byte)
        r_over_p = (1 / hi.slope_us_per_byte) / p
        if math.isfinite(crossing) and crossing > 0:
            fit.bucket_gbps = hi.bandwidth_gbps
            fit.crossing = crossing
            fit.burst_bytes = crossing * (1 - r_over_p)
    # The whole model must hold above the step, the largest sizes included (where a missed
    # or misplaced bucket shows): else the segment fitters take the curve.
    above = s > fit.above_bytes
    miss = np.abs(np.array([fit.at(x) for x in s[above]]) / t[above] - 1)
    if np.median(miss) > MODEL_MEDIAN or miss[-1] > MODEL_LARGEST:
        return None, (f"a step after {fit.above_bytes} B, but the paced model misses the sizes "
                      f"above it (median {100 * np.median(miss):.0f}%, largest size "
                      f"{100 * miss[-1]:.0f}%)")
    return fit, ""
