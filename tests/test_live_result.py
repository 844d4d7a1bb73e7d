"""live/result.py: hopbench's records read back, and the figures a live run reports from
them, on records written here by hand (no MPI run: tests/test_live_hopbench.py runs
hopbench itself). The statistics are the engine's (tests/test_model_statistics.py); these
tests check what is fed to them and how the results are assembled."""
import pytest

from hopsim.errors import InputError
from hopsim.live import result as live_result

ROUTED = ("hopbench 1 roundtrip ranks 2\nhost 0 a\nhost 1 b\n"
          "rtt 0 2 10 30\nrtt 1 2 20 20\nrelays 3 1\nelapsed 0.25\nmessages 12\nend\n")


def test_the_relays_record_keeps_every_rank():
    raw = live_result.parse_raw(ROUTED)
    assert raw["relays"] == [3, 1]
    assert raw["rtt"] == {0: [10, 30], 1: [20, 20]}
    assert raw["messages"] == 12 and raw["elapsed"] == 0.25 and raw["ranks"] == 2


def test_routed_figures_count_hops_per_delivered_message():
    res, per_rank = live_result.roundtrip_figures(live_result.parse_raw(ROUTED), routed=True)
    # 4 round trips deliver 4 requests + 4 replies = 8 messages; 12 transfers were sent,
    # so 12 / 8 = 1.5 hops each. Relays per rank 3 and 1: mean 2, population SD 1, max 3.
    assert res["hops"] == {"mean": 1.5}
    assert res["relays"] == {"mean": 2.0, "sd": 1.0, "max": 3}
    assert per_rank["round_trips"] == [2, 2]
    assert "hops" not in live_result.roundtrip_figures(live_result.parse_raw(ROUTED), routed=False)[0]


def test_exchange_rows_follow_imb_per_size():
    raw = live_result.parse_raw("hopbench 1 exchange ranks 2\n"
                                "exchange 1000 10 0.001 0.003\nexchange 0 10 0 0\nend\n")
    big, empty = live_result.exchange_rows(raw)
    # Per-rank times 1000 and 3000 us: min 1000, max 3000, mean 2000; IMB's rate is
    # 4 messages x 1000 B over t_max = 4000 / 3000 MB/s (MB = 10^6 B, 1 B/us = 1 MB/s).
    assert big == {"bytes": 1000, "repetitions": 10, "t_min_us": 1000.0, "t_max_us": 3000.0,
                   "t_avg_us": 2000.0, "mbytes_per_sec": pytest.approx(4 / 3)}
    assert empty["mbytes_per_sec"] == 0.0 and empty["t_avg_us"] == 0.0


def test_live_figures_from_injected_records():
    raw = live_result.parse_raw(
        "hopbench 1 roundtrip ranks 2\nhost 0 a\nhost 1 b\n"
        "rtt 0 4 10 12 12 2000\nrtt 1 4 30 30 40 50\nrelays 0 0\nelapsed 0.5\nmessages 16\nend\n")
    res, per_rank = live_result.roundtrip_figures(raw, routed=False)
    assert per_rank["lc_mode_us"] == [12.0, 30.0]
    assert per_rank["lc_mean_us"] == [pytest.approx(34 / 3), 37.5]
    assert per_rank["ray_mean_us"] == [508.0, 37.0]  # 2000 us is within Ray's 4096
    assert res["lc_average_of_averages_us"] == pytest.approx((34 / 3 + 37.5) / 2)
    assert res["ray_average_for_all_ranks_us"] == 272.5
    assert res["rtt_us"]["min"] == 10 and res["rtt_us"]["max"] == 2000
    assert res["rtt_us"]["p50"] == 30
    # The plain figures: 2184 us over 8 round trips; p99 is the 8th of 8 sorted values;
    # per-rank means 2034/4 and 150/4, their mean 273 and population SD |508.5 - 273|.
    assert res["rtt_us"]["mean"] == 273.0 and res["rtt_us"]["p99"] == 2000
    assert res["per_rank_mean_us"] == {"average": 273.0, "sd": 235.5}


def test_truncated_or_malformed_hopbench_output_is_one_line():
    with pytest.raises(InputError, match="truncated"):
        live_result.parse_raw("hopbench 1 pingpong ranks 2\npingpong 0 100 10000 0.1\n")
    with pytest.raises(InputError, match=r":2: malformed"):
        live_result.parse_raw("hopbench 1 pingpong ranks 2\npingpong 0 x\nend\n")
