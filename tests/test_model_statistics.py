"""The tools' round-trip statistics (docs/workloads.md), checked from Python.

Hand-made timing lists for each rule, the engine's functions against a plain Python
statement of the same rules on generated lists, and a simulated run whose round trips
are known in closed form.
"""
import math
from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

import hopsim
from hopsim import _engine
from hopsim.platforms import Platform

S = _engine.statistics


# ---- the rules, stated plainly -----------------------------------------------------------

def lc_rank(trips):
    kept = [t for t in trips if t < 1000]
    if not kept:
        return 0, 0.0
    counts = Counter(kept)
    top = max(counts.values())
    return min(v for v, c in counts.items() if c == top), sum(kept) / len(kept)


def ray_mode(trips):
    counts, best = Counter(), None
    for t in trips:
        counts[t] += 1
        if best is None or counts[t] > counts[best]:
            best = t
    return S.RAY_NOT_AVAILABLE if best is None else best


def ray_average(trips):
    kept = [t for t in trips if t <= 4096]
    return sum(kept) // len(kept) if kept else 0


def ray_all(averages):
    kept = [a for a in averages if a != S.RAY_NOT_AVAILABLE and a <= 4096]
    if not kept:
        return 0.0, 0.0
    mean = sum(kept) / len(kept)
    return mean, math.sqrt(sum(math.trunc(a - mean) ** 2 for a in kept) / len(kept))


# ---- hand-made lists -----------------------------------------------------------------

def test_latency_checker_rank_rules():
    # 1500 dropped; 5 and 7 twice each: the smaller wins; mean of kept (5+7+7+5+9)/5.
    assert S.latency_checker_rank([7, 5, 1500, 7, 5, 9]) == (5, 6.6)
    # 1000 is dropped (the histogram stops at 999).
    assert S.latency_checker_rank([1000, 999, 1000]) == (999, 999.0)
    # Nothing kept: mode 0, average 0 ...
    assert S.latency_checker_rank([1200, 5000]) == (0, 0.0)
    # ... and that 0 counts in rank 0's average of averages.
    assert S.latency_checker_average_of_averages([200.0, 0.0, 100.0]) == 100.0


def test_ray_rank_rules():
    # The value that first reached the top count, in order, not the smallest.
    assert S.ray_mode_latency([9, 5, 5, 9, 9, 5]) == 9
    assert S.ray_mode_latency([10, 5000, 5000]) == 5000  # no cut-off for the mode
    assert S.ray_mode_latency([]) == S.RAY_NOT_AVAILABLE
    assert S.ray_average_latency([10, 11, 4097, 4096]) == 1372  # 4117 // 3
    assert S.ray_average_latency([5000]) == 0


def test_ray_all_ranks_rules():
    # Kept 10, 13, 0, 14 (not 5000, not "not available"): mean 9.25; deviations truncated
    # to 0, 3, -9, 4: SD sqrt(106 / 4).
    avg, sd = S.ray_average_for_all_ranks([10, 13, 5000, 0, S.RAY_NOT_AVAILABLE, 14])
    assert avg == 9.25 and sd == pytest.approx(math.sqrt(26.5), rel=1e-15)
    assert S.ray_average_for_all_ranks([]) == (0.0, 0.0)


# ---- generated lists -----------------------------------------------------------------

trips = st.lists(st.integers(min_value=0, max_value=6000), max_size=60)


@settings(max_examples=200, deadline=None)
@given(trips)
def test_per_rank_statistics_follow_the_rules(values):
    mode, average = S.latency_checker_rank(values)
    exp_mode, exp_average = lc_rank(values)
    assert mode == exp_mode and average == pytest.approx(exp_average, rel=1e-12)
    assert S.ray_mode_latency(values) == ray_mode(values)
    assert S.ray_average_latency(values) == ray_average(values)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(min_value=0, max_value=5000),
                          st.just(123123123)), max_size=40))
def test_all_rank_statistics_follow_the_rules(averages):
    avg, sd = S.ray_average_for_all_ranks(averages)
    exp_avg, exp_sd = ray_all(averages)
    assert avg == pytest.approx(exp_avg, rel=1e-12) and sd == pytest.approx(exp_sd, rel=1e-12)


# ---- the live runs' figures (live/result.py uses these functions) ---------

def ray_rank(rtts):
    return S.ray_mode_latency(rtts), S.ray_average_latency(rtts)


def test_latency_checker_statistics_follow_process_c():
    # Mode: first bin with the highest count (ties to the lowest); >= 1000 us dropped.
    assert S.latency_checker_rank([7, 5, 7, 5, 3, 2000]) == (5, pytest.approx(27 / 5))
    assert S.latency_checker_rank([1500, 999]) == (999, 999.0)
    # Nothing kept: mode 0, average 0; the all-rank mean keeps the zero.
    assert S.latency_checker_rank([1000, 4000]) == (0, 0.0)
    assert S.latency_checker_average_of_averages([10.0, 0.0, 20.0]) == 10.0


def test_ray_statistics_follow_networktest_cpp():
    # The mode changes only on a strictly higher count: the value that got there first.
    assert ray_rank([6, 5, 5, 6]) == (5, 5)
    assert ray_rank([9, 9, 4, 4, 4, 9]) == (4, 6)
    # Mode over everything, mean (integer division) over <= 4096 us only.
    assert ray_rank([5000, 5000, 10, 11]) == (5000, 10)
    assert ray_rank([]) == (S.RAY_NOT_AVAILABLE, 0)
    # All ranks: averages above 4096 left out; deviations truncated before squaring.
    avg, sd = S.ray_average_for_all_ranks([10, 11, 11, 9000])
    assert avg == pytest.approx(32 / 3)
    assert sd == pytest.approx((0 + 0 + 0) ** 0.5)  # |10 - 10.67| and |11 - 10.67| truncate to 0
    avg, sd = S.ray_average_for_all_ranks([1, 4])
    assert (avg, sd) == (2.5, pytest.approx(((1 + 1) / 2) ** 0.5))  # int(-1.5) = -1, int(1.5) = 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=6000), min_size=1, max_size=200))
def test_latency_checker_average_is_the_mean_of_the_kept_round_trips(rtts):
    mode, avg = S.latency_checker_rank(rtts)
    kept = [v for v in rtts if v < 1000]
    assert avg == pytest.approx(sum(kept) / len(kept) if kept else 0.0)
    if kept:
        assert kept.count(mode) == max(kept.count(v) for v in kept)
        assert mode == min(v for v in kept if kept.count(v) == kept.count(mode))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=6000), min_size=1, max_size=200))
def test_ray_mode_has_the_highest_count_and_mean_is_truncated(rtts):
    mode, avg = ray_rank(rtts)
    assert rtts.count(mode) == max(rtts.count(v) for v in rtts)
    kept = [v for v in rtts if v <= 4096]
    assert avg == (sum(kept) // len(kept) if kept else 0)


def test_mean_sd_and_nearest_rank_percentile():
    # 1..4: mean 2.5, squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5 over 4.
    assert S.mean_sd([1, 2, 3, 4]) == (2.5, math.sqrt(1.25))
    assert all(math.isnan(x) for x in S.mean_sd([]))
    # Nearest rank: the ceil(p/100 n)-th smallest value (at least the first).
    assert S.percentile([40, 10, 30, 20], 50) == 20      # 2nd of 4
    assert S.percentile([40, 10, 30, 20], 99) == 40      # ceil(3.96) = 4th
    assert S.percentile([40, 10, 30, 20], 25) == 10      # 1st
    assert S.percentile([7], 0.1) == 7
    with pytest.raises(ValueError, match="percentile"):
        S.percentile([], 50)


# ---- a simulated run with known round trips -------------------------------------------

def one_rank(intra_latency_us: float) -> Platform:
    return Platform(name="loop", nodes=1, cores=1, latency_us=1.0, bandwidth_gbps=1.0,
                    intra_latency_us=intra_latency_us, intra_bandwidth_gbps=1.0)


def test_simulated_round_trips_are_read_as_the_tools_clocks_read_them():
    # One rank, empty messages to itself, no host costs: each round trip is 2 x 333.3 us
    # and the next one starts when the previous ends, so round trip k runs from
    # 666.6 k to 666.6 (k+1) us; the tools read each end as a whole microsecond of the
    # clock: floor(666.6 (k+1)) - floor(666.6 k), i.e. 666 or 667.
    r = hopsim.simulate(one_rank(333.3), "roundtrip", ranks=1, exchanges=7,
                        request_bytes=0, reply_bytes=0)
    ends = [math.floor(666.6 * k + 1e-6) for k in range(8)]
    whole = [b - a for a, b in zip(ends, ends[1:])]
    assert whole == [666, 667, 666, 667, 667, 666, 667]
    mode, average = lc_rank(whole)
    assert r.per_rank["lc_mode_us"] == [mode] == [667]
    assert r.per_rank["lc_mean_us"] == [pytest.approx(average)]
    assert r.per_rank["ray_mode_us"] == [ray_mode(whole)] == [667]
    assert r.per_rank["ray_mean_us"] == [sum(whole) // 7]
    assert r.results["lc_average_of_averages_us"] == pytest.approx(average)
    # The plain statistics keep the exact times.
    assert r.results["rtt_us"]["mean"] == pytest.approx(666.6)
    assert r.per_rank["mean_us"] == [pytest.approx(666.6)]


def test_a_rank_with_no_round_trip_under_1000_reports_zero_to_latency_checker():
    r = hopsim.simulate(one_rank(600.0), "roundtrip", ranks=1, exchanges=3,
                        request_bytes=0, reply_bytes=0)
    assert r.per_rank["lc_mode_us"] == [0] and r.per_rank["lc_mean_us"] == [0.0]
    assert r.results["lc_average_of_averages_us"] == 0.0
    # Ray keeps round trips up to 4096 us.
    assert r.per_rank["ray_mean_us"] == [1200]
    assert r.results["ray_average_for_all_ranks_us"] == 1200.0
