"""The joint fit: every measured case of every file, simulated by the engine, fitted at once.

    from hopsim.calibration.joint import fit_joint
    j = fit_joint(platform, cases, ["latency_us", "bandwidth_gbps"], base=base_platform)
    j.platform, j.se_rel, j.undetermined, j.bic

The residual of a case is log(simulated / measured): a relative error that treats a 5 us
and a 50 ms case alike and is symmetric in over- and under-prediction. Every file weighs
the same (a NetPIPE file's 100 rows count as much as one latency_checker figure): case i
of a file with n_f cases is weighted by sqrt(n / (F n_f)), n cases and F files in all.
The parameters are fitted as x = log(value / start), bounded, by scipy's least_squares
with the soft_l1 loss at 10% (a few rows hit by another process's time slice, or a
mechanism the engine does not model, count linearly, not squared). Cases are replayed by
validate.simulate_cases, the same code `hopsim validate` runs, with at most `cap`
iterations per case (the fit's engine budget).

What the data determine: the Jacobian J of the weighted log residuals at the optimum
(forward differences of 2% in each parameter), s^2 = RSS / (n - k), cov = s^2 (J^T J)^+;
sqrt(cov_jj) is the relative standard error of parameter j (x is a logarithm). A
parameter whose column of J is below 1e-3 of the largest, or whose relative SE is above
SE_LIMIT, is not determined by these files; so is every parameter of a combination no
case moves apart (a singular value of J, columns scaled to unit norm, below 1e-3 of the
largest: only their combination is seen, whatever the residuals).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import least_squares

from ..bounds import MIN_TIME_US
from ..errors import InputError
from ..platforms.platform import FILE_KEYS, Platform
from .validate import Case, simulate_cases

# A message's headers as a tbf counts them, at most: Ethernet, IPv4 and TCP with options
# (66 B) on its packet and on the acknowledgement that shares the bucket on the way back,
# and Open MPI's own (ob1's match header and the TCP BTL's, 24 B; 32 allowed). Past it the
# fit charges the token bucket for what is a per-message CPU cost (host.gap_us): rig O's
# 2-host files took 429 B, and the bucket then slowed every converging 4000 B round trip
# of its 8-rank latency_checker runs (16-24% slow; at most 11% with no header charge).
MAX_HEADER_BYTES = 2 * 66 + 32
# Bounds of every parameter the joint fit may free (platform units). A time is never under
# the platform's nonzero minimum (1 ns, SimGrid's precision): the fit must not write a
# value the platform file refuses (tests/test_calibrate_joint.py checks each one).
BOUNDS = {
    "latency_us": (MIN_TIME_US, 1e5), "bandwidth_gbps": (1e-4, 1e4), "pacing_gbps": (1e-4, 1e4),
    "bucket_gbps": (1e-4, 1e4), "bucket_burst_bytes": (1.0, 1e9),
    "bucket_message_bytes": (1.0, MAX_HEADER_BYTES), "pass_us": (MIN_TIME_US, 1e4),
    "nic_message_us": (MIN_TIME_US, 1e4), "intra_latency_us": (MIN_TIME_US, 1e5),
    "intra_bandwidth_gbps": (1e-3, 1e5), "limiter_gbps": (1e-4, 1e4), "backbone_gbps": (1e-4, 1e4),
    "gap_us": (MIN_TIME_US, 1e4),
}
# Iterations (repetitions, round trips per rank) per case at most while fitting.
FIT_CAP = 300
# Soft-l1's scale on the log residuals: beyond ~10% a residual counts linearly.
F_SCALE = 0.1
# Above this relative standard error a parameter is reported as not determined.
SE_LIMIT = 0.5
# A Jacobian column below this fraction of the largest column norm: the data do not see it.
FLAT = 1e-3
# Forward-difference step of the Jacobian, in log(value): 2%.
STEP = 0.02
# Optimiser iterations per fit (each costs k + 1 evaluations of every case).
MAX_NFEV = 12


def key(field_: str) -> str:
    return FILE_KEYS[field_]


@dataclass
class JointFit:
    platform: Platform
    free: list[str]
    cases: list[Case]
    residuals: np.ndarray           # weighted log residuals at the optimum
    cost: float                     # robust cost (soft_l1), as least_squares defines it
    simulated: list[float] = field(default_factory=list)  # per case, at the optimum
    se_rel: dict = field(default_factory=dict)      # field -> relative SE (inf: flat)
    undetermined: list[str] = field(default_factory=list)
    evaluations: int = 0
    seconds: float = 0.0
    # Discrete values chosen from these data before the fit (a screened threshold): each
    # counts as a parameter in the BIC, as a fitted one would.
    chosen_k: int = 0

    @property
    def n(self) -> int:
        return len(self.residuals)

    @property
    def k(self) -> int:
        return len(self.free) + self.chosen_k

    @property
    def bic(self) -> float:
        return bic_of(self.residuals, self.k)

    @property
    def aic(self) -> float:
        # bic_of's likelihood term, with AIC's penalty of 2 per parameter.
        return bic_of(self.residuals, self.k) - self.k * math.log(self.n) + 2 * self.k

    def errors_pct(self) -> list[float]:
        return [100.0 * (s - c.measured_us) / c.measured_us for c, s in zip(self.cases, self.simulated)]

    def median_abs_error_pct(self) -> float:
        return float(np.median(np.abs(self.errors_pct()))) if self.cases else float("nan")

    def restore(self) -> None:
        """Put this fit's simulated values back into its cases (other fits share them)."""
        for c, s in zip(self.cases, self.simulated):
            c.simulated_us = s


def weights(cases: list[Case]) -> np.ndarray:
    per_file: dict[str, int] = {}
    for c in cases:
        per_file[c.file] = per_file.get(c.file, 0) + 1
    n, files = len(cases), len(per_file)
    return np.array([math.sqrt(n / (files * per_file[c.file])) for c in cases])


class Model:
    """The engine as a function of the free parameters: x -> weighted log residuals."""

    def __init__(self, start: Platform, cases: list[Case], free: list[str], cap: int | None):
        bad = [c for c in cases if not c.measured_us > 0]
        if bad:
            raise InputError(f"{bad[0].file}:{bad[0].line}: a measured value of "
                             f"{bad[0].measured_us} cannot be fitted on a relative scale")
        self.start, self.cases, self.free, self.cap = start, cases, free, cap
        self.v0 = np.array([float(getattr(start, f)) for f in free])
        if np.any(self.v0 <= 0):
            zero = [f for f, v in zip(free, self.v0) if v <= 0]
            raise ValueError(f"joint fit: free parameters must start above 0: {zero}")
        self.w = weights(cases)
        self.meas = np.array([c.measured_us for c in cases])
        self.evaluations = 0
        self._seen: dict[bytes, np.ndarray] = {}

    def platform(self, x) -> Platform:
        values = self.v0 * np.exp(np.asarray(x, float))
        changes = {}
        for f, v in zip(self.free, values):
            lo, hi = BOUNDS[f]
            changes[f] = float(f"{min(max(float(v), lo), hi):.6g}")
        return self.start.replace(**changes)

    def __call__(self, x) -> np.ndarray:
        p = self.platform(x)
        tag = repr(sorted((f, getattr(p, f)) for f in self.free)).encode()
        if tag not in self._seen:
            simulate_cases(p, self.cases, cap=self.cap)
            self.evaluations += 1
            sim = np.array([max(c.simulated_us, 1e-9) for c in self.cases])
            self._seen[tag] = self.w * np.log(sim / self.meas)
        return self._seen[tag]

    def jacobian(self, x) -> np.ndarray:
        """Forward differences of STEP in each log-parameter (backwards at an upper
        bound). scipy's own steps are relative to x, which starts at 0 here."""
        x = np.asarray(x, float)
        f0 = self(x)
        _, hi = self.bounds()
        jac = np.empty((len(f0), len(x)))
        for i in range(len(x)):
            h = STEP if x[i] + STEP <= hi[i] else -STEP
            xi = x.copy()
            xi[i] += h
            jac[:, i] = (self(xi) - f0) / h
        return jac

    def bounds(self):
        lo = [math.log(BOUNDS[f][0] / v) for f, v in zip(self.free, self.v0)]
        hi = [math.log(BOUNDS[f][1] / v) for f, v in zip(self.free, self.v0)]
        return lo, hi


def fit_joint(start: Platform, cases: list[Case], free: list[str], cap: int | None = FIT_CAP,
              max_nfev: int = MAX_NFEV) -> JointFit:
    """Fit the fields `free` of `start` to every case, jointly. With no free field, only
    the residuals of `start` (a structure with nothing to fit is still compared)."""
    t0 = time.perf_counter()
    free = list(dict.fromkeys(f for f in free if f in BOUNDS))
    model = Model(start, cases, free, cap)
    if free:
        lo, hi = model.bounds()
        x0 = np.clip(np.zeros(len(free)), np.array(lo) + 1e-9, np.array(hi) - 1e-9)
        r = least_squares(model, x0, jac=model.jacobian, bounds=(lo, hi), loss="soft_l1",
                          f_scale=F_SCALE, x_scale=1.0, max_nfev=max_nfev)
        x = r.x
    else:
        x = np.zeros(0)
    res = model(x)
    platform = model.platform(x)
    simulate_cases(platform, cases, cap=cap)
    j = JointFit(platform, free, cases, res, _soft_l1_cost(res),
                 [c.simulated_us for c in cases])
    if free:
        j.se_rel, j.undetermined = _standard_errors(model, x, res)
        j.restore()   # the Jacobian's evaluations moved the cases
    j.evaluations, j.seconds = model.evaluations, time.perf_counter() - t0
    return j


def bic_of(res: np.ndarray, k: int) -> float:
    """BIC of k parameters over the weighted log residuals res under a Laplace likelihood:
    2 n log(mean |r|) + k log n (-2 log L at the scale's maximum, b = mean |r|, constants
    dropped), floored so that a perfect fit stays finite. Laplace, not Gaussian: soft_l1
    counts a residual beyond its scale linearly, as a Laplace density does, and the noise
    of a shared machine has such tails. Read as Gaussian, the robust cost (linear there)
    gave half the evidence where the residuals are large: a fit missing the largest sizes
    by 30% against one within 5% on a loaded machine's run came out undecided."""
    n = len(res)
    return 2 * n * math.log(max(float(np.mean(np.abs(res))), 1e-6)) + k * math.log(n)


def _soft_l1_cost(res: np.ndarray) -> float:
    z = (res / F_SCALE) ** 2
    return float(0.5 * F_SCALE ** 2 * np.sum(2.0 * (np.sqrt(1.0 + z) - 1.0)))


def _standard_errors(model: Model, x: np.ndarray, res: np.ndarray):
    """(field -> relative SE, [undetermined fields]) from a forward-difference Jacobian."""
    k, n = len(x), len(res)
    jac = model.jacobian(x)
    norms = np.linalg.norm(jac, axis=0)
    flat = norms < FLAT * max(float(norms.max()), 1e-300)
    s2 = float(res @ res) / max(n - k, 1)
    cov = s2 * np.linalg.pinv(jac.T @ jac)
    tied = _tied(jac, flat)
    se = {}
    undetermined = []
    for i, f in enumerate(model.free):
        v = float(cov[i, i])
        se[f] = math.inf if flat[i] or tied[i] or not v >= 0 else math.sqrt(v)
        if flat[i] or tied[i] or se[f] > SE_LIMIT:
            undetermined.append(f)
    return se, undetermined


def _tied(jac: np.ndarray, flat: np.ndarray) -> np.ndarray:
    """Parameters no case moves apart: a singular value of J (columns scaled to unit
    norm) below FLAT means only a combination of them is seen (a latency and a NIC cost
    that every case pays as L + 2c). Their standard errors scale with the residuals, so
    data that fit exactly (the engine's own outputs) would call them determined: each
    parameter with a loading above 0.1 on such a direction is undetermined instead."""
    keep = ~flat
    out = np.zeros(len(flat), bool)
    if keep.sum() < 2:
        return out
    cols = jac[:, keep] / np.linalg.norm(jac[:, keep], axis=0)
    _, sv, vt = np.linalg.svd(cols, full_matrices=False)
    null = vt[sv < FLAT * sv.max()]
    out[np.flatnonzero(keep)] = np.any(np.abs(null) > 0.1, axis=0) if len(null) else False
    return out
