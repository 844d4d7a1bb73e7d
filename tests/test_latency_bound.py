"""Which measured cases count toward issue 16's targets (calibration/latency_bound.py):
Hockney's half-performance length, read from measurements only."""
from pathlib import Path

import pytest

from hopsim.calibration.latency_bound import (counted, counted_flags, half_length, latency_bound,
                                              rig_half_length, zero_byte_times)

DATA = Path(__file__).parent / "data"


def test_half_length_of_a_latency_plus_rate_curve_is_latency_times_rate():
    # t(n) = 10 us + n / (100 B/us): n½ = t0 * r = 1000 B, between the measured 512 and 1024.
    times = {n: 10 + n / 100 for n in (0, 1, 64, 512, 1024, 4096)}
    assert half_length(times) == pytest.approx(1000.0)


def test_half_length_is_the_first_size_that_reaches_twice_the_zero_byte_time():
    # A noisy curve that dips back under 2 t0 after reaching it: n½ is the first crossing.
    assert half_length({0: 10.0, 8: 12.0, 16: 32.0, 32: 15.0, 64: 40.0}) == pytest.approx(8 + 8 * 8 / 20)
    assert half_length({0: 10.0, 8: 25.0}) == pytest.approx(8 * 10 / 15)
    # A size measured exactly at 2 t0 is n½ itself.
    assert half_length({0: 10.0, 8: 12.0, 16: 20.0, 32: 40.0}) == pytest.approx(16.0)


@pytest.mark.parametrize("times", [{}, {8: 10.0, 16: 40.0}, {0: 10.0, 8: 12.0, 16: 19.9}, {0: 0.0, 8: 1.0}])
def test_no_half_length_without_a_zero_byte_time_or_a_size_that_reaches_twice_it(times):
    assert half_length(times) is None


def test_the_rigs_half_length_is_read_from_its_imb_pingpong_files():
    # The real IMB output (a 100 Mbit/s rig on a loaded machine): 0 B 67.94 us, 8 B 55.95,
    # 16 B 325.71, the first size over 135.88 us: n½ = 8 + 8 (135.88 - 55.95) / (325.71 - 55.95).
    f = DATA / "imb" / "IMB-MPI1-pingpong-timeout-np2-100mbit.txt"
    assert rig_half_length([f]) == pytest.approx(8 + 8 * (135.88 - 55.95) / (325.71 - 55.95))
    # Files that do not parse are skipped; none left: no n½.
    assert rig_half_length([DATA / "README.md"]) is None


def _case(bytes_, measured, ranks=4, file="x.txt", stat="t_avg_us"):
    return {"file": file, "workload": "exchange", "statistic": stat, "bytes": bytes_,
            "ranks": ranks, "measured_us": measured}


def test_a_case_under_twice_its_runs_zero_byte_time_is_latency_bound():
    assert latency_bound(_case(1024, 19.99), t0=10.0, n_half=None)
    assert not latency_bound(_case(1024, 20.0), t0=10.0, n_half=None)
    # The run's own zero-byte time decides, not the rig's n½.
    assert not latency_bound(_case(16, 30.0), t0=10.0, n_half=1e6)


def test_a_run_of_one_size_is_set_against_the_rigs_half_length():
    lc = _case(4000, 50.0, stat="lc_average_of_averages_us")
    assert latency_bound(lc, t0=None, n_half=4001)
    assert not latency_bound(lc, t0=None, n_half=4000)
    # Nothing shows it is rate-bound: left out.
    assert latency_bound(lc, t0=None, n_half=None)


@pytest.mark.parametrize("ranks, cores, measured, expected", [
    (4, 2, 19.0, False),   # latency-bound, 4 busy ranks on 2 cores: the scheduler's
    (4, 2, 21.0, True),    # rate-bound: counted whatever the ranks
    (2, 2, 19.0, True),    # as many ranks as cores: counted even when latency-bound
    (5, 4, 19.0, False),
])
def test_counted_leaves_out_latency_bound_cases_with_more_ranks_than_cores(ranks, cores, measured, expected):
    assert counted(_case(1024, measured, ranks=ranks), cores, t0=10.0) is expected


def test_zero_byte_times_are_per_run_workload_and_statistic():
    cases = [_case(0, 10.0, file="a"), _case(0, 30.0, file="b"), _case(1024, 15.0, file="a"),
             _case(0, 7.0, file="a", stat="t_max_us")]
    assert zero_byte_times(cases) == {("a", "exchange", "t_avg_us"): 10.0,
                                      ("b", "exchange", "t_avg_us"): 30.0,
                                      ("a", "exchange", "t_max_us"): 7.0}


def test_counted_flags_set_each_case_against_its_own_runs_zero_byte_time():
    # Run a: 0 B in 10 us, so 1 KiB in 19 us is latency-bound and 25 us is not; run b's
    # 0 B took 30 us, so its 1 KiB in 25 us is latency-bound; the one-size run c (no
    # zero-byte case) goes by n½ = 2000 B: its 4000 B counts, its 1000 B does not.
    cases = [_case(0, 10.0, file="a"), _case(1024, 19.0, file="a"), _case(1024, 25.0, file="a"),
             _case(0, 30.0, file="b"), _case(1024, 25.0, file="b"),
             {**_case(4000, 50.0, file="c"), "workload": "roundtrip"},
             {**_case(1000, 50.0, file="c"), "workload": "roundtrip"}]
    assert counted_flags(cases, 2, 2000.0) == [False, False, True, False, False, True, False]
    # With as many cores as ranks every case counts.
    assert counted_flags(cases, 4, 2000.0) == [True] * 7
