"""Formatters never crash: a statistic over no kept sample (JSON null) prints what the real
tool prints then (latency_checker and Ray: 0), and hopsim run's table never prints None."""
import subprocess
import sys

import pytest

from hopsim import formats, scenarios
from hopsim.result import Result


def hopsim(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_roundtrips_all_above_latency_checkers_cutoff_print_zeros():
    # 200000 bytes at 1 Gbit/s each way: every round trip is over 3 ms, above the 1000 us
    # latency_checker keeps, so its get_result prints mode 0 and average 0.000000.
    p = hopsim("simulate", "--platform", "two-nodes", "--workload", "roundtrip", "--ranks", 2,
               "--request-bytes", 200000, "--exchanges", 3)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    lines = p.stdout.splitlines()
    assert lines[1] == ("Rank 0 -> mode roundtrip latency: 0 microseconds, average roundtrip "
                        "latency: 0.000000 microseconds")
    assert lines[-1] == "Rank 0 -> average of average roundtrip latencies: 0.000000 microseconds"


def _roundtrip(stat, routed=False):
    results = {"rtt_us": {"mean": stat, "p50": stat, "p99": stat, "min": stat, "max": stat},
               "per_rank_mean_us": {"average": stat, "sd": stat},
               "lc_average_of_averages_us": stat, "ray_average_for_all_ranks_us": stat,
               "ray_standard_deviation_us": stat}
    params = {"request_bytes": 4000, "reply_bytes": 0, "exchanges": 2}
    if routed:
        results["hops"] = {"mean": 2.0}
        results["relays"] = {"mean": stat, "sd": stat, "max": 0}
        params["overlay"] = "debruijn"
    per_rank = {k: [stat, stat] for k in ("lc_mode_us", "lc_mean_us", "ray_mode_us", "ray_mean_us")}
    per_rank["round_trips"] = [2, 2]
    per_rank["node"] = [0, 1]  # the engine's placement: one rank per node
    return Result("p", "roundtrip", 2, 1, 1, 0.1, 0.0, 8, results, per_rank, params)


@pytest.mark.parametrize("stat", [None, 0.0, 5000.5])
def test_roundtrip_formats_never_crash(stat):
    text = formats.text(_roundtrip(stat, routed=True))
    assert "None" not in text and "nan" not in text
    if stat is None:
        assert "mode roundtrip latency: 0 microseconds, average roundtrip latency: 0.000000" in text
        assert "# AverageForAllRanks: 0\n# StandardDeviation: 0\n" in text
        assert "\n0\tnode-0\t0\t0\t2\n" in text


def test_osu_and_imb_print_a_null_as_printf_prints_nan():
    osu = Result("p", "pingpong", 2, 1, 1, 0.1, 0.0, 2,
                 {"rows": [{"bytes": 0, "latency_us": None}]})
    assert formats.text(osu).splitlines()[-1] == f"{0:<10d}{'nan':>20}"
    imb = Result("p", "exchange", 2, 1, 1, 0.1, 0.0, 2,
                 {"rows": [{"bytes": 8, "repetitions": 10, "t_min_us": None, "t_max_us": 1.0,
                            "t_avg_us": None, "mbytes_per_sec": None}]})
    assert formats.text(imb).splitlines()[-1] == (f"{8:13d}{10:13d}{'nan':>13}{1.0:13.2f}"
                                                  f"{'nan':>13}{'nan':>13}")


def test_run_table_shows_a_dash_for_a_null_statistic():
    s = scenarios.parse_scenario('platform = "two-nodes"\nworkload = "roundtrip"\nranks = 2\n'
                                 "[sweep]\nexchanges = [1, 2]\n", "t")
    outcome = scenarios.Outcome(s, s.points(), [_roundtrip(None), _roundtrip(7.0)])
    table = scenarios.table(outcome)
    assert "None" not in table
    row = table.splitlines()[-2].split()
    assert row[:3] == ["1", "-", "-"], table


def test_run_table_prints_a_whole_double_like_the_rest_of_its_column():
    # The engine's JSON writes a double that happens to be whole as "235": in a column of
    # floats it must still print as 235.00, not as a lone integer.
    s = scenarios.parse_scenario('platform = "two-nodes"\nworkload = "roundtrip"\nranks = 2\n'
                                 "[sweep]\nexchanges = [1, 2]\n", "t")
    outcome = scenarios.Outcome(s, s.points(), [_roundtrip(235), _roundtrip(242.4)])
    rows = [line.split() for line in scenarios.table(outcome).splitlines()[-2:]]
    assert rows[0][1:3] == ["235.00", "235.00"], rows
    assert rows[1][1:3] == ["242.40", "242.40"], rows


def test_sweep_rows_take_each_statistic_from_its_own_key():
    # Every statistic a different number, so a column filled from a neighbour's key (p99
    # from p50, the per-rank SD from the per-rank average) shows.
    r = _roundtrip(1.0, routed=True)
    r.results.update(rtt_us={"mean": 10.5, "p50": 9.0, "p99": 31.0, "min": 2.0, "max": 44.0},
                     per_rank_mean_us={"average": 11.25, "sd": 2.75},
                     lc_average_of_averages_us=12.5, ray_average_for_all_ranks_us=13.5,
                     ray_standard_deviation_us=0.5)
    r.results["relays"] = {"mean": 3.5, "sd": 1.5, "max": 7}
    [row] = scenarios.flat_rows(r)
    assert {k: row[k] for k in ("rtt_mean_us", "rtt_p50_us", "rtt_p99_us", "rtt_min_us",
                                "rtt_max_us", "per_rank_mean_average_us", "per_rank_mean_sd_us",
                                "lc_average_of_averages_us", "ray_average_for_all_ranks_us",
                                "ray_standard_deviation_us", "relays_mean", "relays_sd",
                                "relays_max", "hops_mean")} == {
        "rtt_mean_us": 10.5, "rtt_p50_us": 9.0, "rtt_p99_us": 31.0, "rtt_min_us": 2.0,
        "rtt_max_us": 44.0, "per_rank_mean_average_us": 11.25, "per_rank_mean_sd_us": 2.75,
        "lc_average_of_averages_us": 12.5, "ray_average_for_all_ranks_us": 13.5,
        "ray_standard_deviation_us": 0.5, "relays_mean": 3.5, "relays_sd": 1.5,
        "relays_max": 7, "hops_mean": 2.0}
    s = scenarios.parse_scenario('platform = "two-nodes"\nworkload = "roundtrip"\nranks = 2\n', "t")
    table = scenarios.table(scenarios.Outcome(s, s.points(), [r])).splitlines()
    header, values = table[-2].split(), table[-1].split()
    assert values[header.index("rtt_p99_us")] == "31.00", table
    assert values[header.index("rtt_mean_us")] == "10.50", table
