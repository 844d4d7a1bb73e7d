"""Each mechanism decided by the cases that can decide it (calibration/structure.compare).
(The cases a rig's targets count: tests/test_latency_bound.py.)

The fits here are built by hand (residuals and simulated times chosen), so that what the
comparison counts is known exactly: no engine runs.
"""
import math
from types import SimpleNamespace

import numpy as np
import pytest

from hopsim.calibration.joint import JointFit, _soft_l1_cost, bic_of
from hopsim.calibration.structure import BIC_MARGIN, MOVED, Decision, compare
from hopsim.platforms.platform import Platform

P = Platform(name="p", nodes=4, cores=2, latency_us=10.0, bandwidth_gbps=1.0)


def _fit(residuals, simulated, k):
    res = np.asarray(residuals, float)
    cases = [SimpleNamespace(measured_us=1.0)] * len(res)
    return JointFit(P, [f"x{i}" for i in range(k)], cases, res, _soft_l1_cost(res),
                    list(simulated))


def _noisy_background(seed=3, n=100):
    # Rows no alternative moves (a ping-pong's small sizes on a shared machine): large
    # log residuals, the same in every fit.
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, 0.8, n), rng.uniform(5.0, 50.0, n)


def test_a_mechanism_on_a_tenth_of_the_cases_is_decided_by_those_cases():
    noise, times = _noisy_background()
    # Ten large both-ways cases: 'none' misses them by 40% (log 0.336), the capacity fits
    # them to 1% at the price of one parameter more.
    big = np.full(10, 1000.0)
    none = _fit(np.r_[noise, np.full(10, math.log(1.4))], np.r_[times, big / 1.4], k=2)
    cap = _fit(np.r_[noise, np.full(10, 0.01)], np.r_[times, big * 1.01], k=3)
    # Over every case the background's scale drowns the difference...
    assert none.bic - cap.bic < BIC_MARGIN
    bics, n = compare([("none", none), ("capacity", cap)])
    # ...over the ten cases the capacity moves, it is decisive.
    assert n == 10
    assert bics["none"] - bics["capacity"] >= BIC_MARGIN
    assert bics["capacity"] == pytest.approx(bic_of(np.full(10, 0.01), 3))


def test_cases_moved_by_less_than_moved_are_not_compared():
    noise, times = _noisy_background(n=20)
    shift = math.exp(MOVED / 2)   # under the threshold: the same case to both
    moved = np.array([100.0, 200.0, 300.0, 400.0])
    a = _fit(np.r_[noise, [0.5] * 4], np.r_[times, moved], k=2)
    b = _fit(np.r_[noise + 0.001, [0.0] * 4], np.r_[times * shift, moved * 1.5], k=2)
    bics, n = compare([("a", a), ("b", b)])
    assert n == 4
    assert bics["a"] == pytest.approx(bic_of(np.array([0.5] * 4), 2))


def test_too_few_moved_cases_for_the_parameters_fall_back_to_every_case():
    noise, times = _noisy_background(n=20)
    a = _fit(np.r_[noise, [0.5]], np.r_[times, [100.0]], k=2)
    b = _fit(np.r_[noise, [0.0]], np.r_[times, [150.0]], k=3)
    bics, n = compare([("a", a), ("b", b)])
    assert n == 21
    assert bics == {"a": a.bic, "b": b.bic}


def test_no_moved_case_leaves_the_mechanism_undecided_and_says_so():
    noise, times = _noisy_background(n=20)
    a, b = _fit(noise, times, k=2), _fit(noise * 0.5, times, k=3)
    bics, n = compare([("on", a), ("off", b)])
    assert n == 0
    d = Decision("probe visibility", [("on", a), ("off", b)], "off", "off", True, bics=bics,
                 compared=n)
    assert "undecided (no case moves)" in d.line()
    assert "on the 0 of 20 cases they move apart" in d.line()


def test_a_nested_alternative_that_fits_worse_than_its_limit_is_no_evidence():
    from hopsim.calibration.structure import Alternative, _stuck

    noise, times = _noisy_background(n=50)
    none = _fit(noise * 0.2, times, k=2)
    cap = Alternative("per-node limiter", P, ["limiter_gbps"], nests="none")
    others = [Alternative("none", P, [])]
    # The capacity's fit stopped well above none's cost: the comparison is void.
    worse = _fit(noise * 0.3, times, k=3)
    why = _stuck([others[0], cap], {"none": none, "per-node limiter": worse}, "none")
    assert "per-node limiter stopped at a higher cost" in why and "than none" in why
    # Another alternative, fitted properly, beat none: its win stands.
    assert _stuck([others[0], cap], {"none": none, "per-node limiter": worse}, "backbone") == ""
    # Equal to it (the capacity fitted out of the way) or better: a fair comparison.
    assert _stuck([others[0], cap], {"none": none, "per-node limiter": _fit(noise * 0.2, times, k=3)}, "none") == ""
    assert _stuck([others[0], cap], {"none": none, "per-node limiter": _fit(noise * 0.1, times, k=3)}, "none") == ""
    # Two exact fits (the engine's own outputs) are never stuck, whatever their rounding.
    exact = _fit(np.full(50, 1e-9), times, k=2)
    assert _stuck([others[0], cap], {"none": exact, "per-node limiter": _fit(np.full(50, 1e-8), times, k=3)}, "none") == ""


def test_a_value_chosen_from_the_data_counts_as_a_parameter_in_the_bic():
    # The eager threshold screened from the exchange's sizes (structure._screen) was
    # chosen by these data: one parameter more, ln n more BIC, as a fitted one costs.
    j = _fit([0.1, -0.1, 0.2, -0.2], [1.0] * 4, k=1)
    assert j.bic == pytest.approx(8 * math.log(0.15) + 1 * math.log(4))
    j.chosen_k = 1
    assert j.k == 2
    assert j.bic == pytest.approx(8 * math.log(0.15) + 2 * math.log(4))
