"""The tools' text layouts, on hand-written results (the engine's numbers are tested
elsewhere; here only the columns, widths and wording)."""
from hopsim import Result, formats


def result(workload, results, per_rank=None, ranks=2, ranks_per_node=1, **parameters):
    return Result(platform="p", workload=workload, ranks=ranks, ranks_per_node=ranks_per_node,
                  seed=1, simulated_seconds=0.5, wall_seconds=0.1, messages=10,
                  results=results, per_rank=per_rank or {}, parameters=parameters)


def test_osu_latency_table():
    r = result("pingpong", {"rows": [
        {"bytes": 0, "latency_us": 1.234, "bandwidth_mbytes_per_sec": 0.0},
        {"bytes": 4194304, "latency_us": 33564.4321, "bandwidth_mbytes_per_sec": 124.96}]})
    assert formats.osu_latency(r).splitlines() == [
        f"# OSU MPI Latency Test v{formats.OSU_VERSION}",
        "# Size            Latency (us)",  # "%-*s%*s", 10, "# Size", 20, "Latency (us)"
        "0                         1.23",
        "4194304               33564.43",
    ]
    assert formats.text(r) == formats.osu_latency(r)


def test_imb_exchange_block_has_13_character_columns():
    r = result("exchange", {"rows": [
        {"bytes": 0, "repetitions": 1000, "t_min_us": 20.0, "t_max_us": 20.0, "t_avg_us": 20.0,
         "mbytes_per_sec": 0.0},
        {"bytes": 65536, "repetitions": 640, "t_min_us": 1068.576, "t_max_us": 1068.58,
         "t_avg_us": 1068.578, "mbytes_per_sec": 245.317}]}, ranks=4)
    lines = formats.imb_exchange(r).splitlines()
    assert lines[:5] == [
        "#" + "-" * 77, "# Benchmarking Exchange", "# #processes = 4", "#" + "-" * 77,
        "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]   Mbytes/sec"]
    assert lines[5] == "            0         1000        20.00        20.00        20.00         0.00"
    assert lines[6] == "        65536          640      1068.58      1068.58      1068.58       245.32"
    assert all(len(line) == 78 for line in lines[4:])


ROUNDTRIP = {"rtt_us": {"mean": 236.0, "p50": 230.0, "p99": 400.0, "min": 200.0, "max": 500.0},
             "per_rank_mean_us": {"average": 235.5, "sd": 3.25},
             "lc_average_of_averages_us": 235.200785, "ray_average_for_all_ranks_us": 1081.6071,
             "ray_standard_deviation_us": 35.20181}
PER_RANK = {"lc_mode_us": [231.0, 229.5], "lc_mean_us": [236.1, 234.301570],
            "ray_mode_us": [1050.0, 1049.0], "ray_mean_us": [1081.9, 1080.2],
            "round_trips": [1000, 1000]}


def test_latency_checker_lines():
    r = result("roundtrip", ROUNDTRIP, PER_RANK, request_bytes=4000, exchanges=100000, overlay="")
    assert formats.latency_checker(r).splitlines() == [
        "Rank 0 -> message size: 4000 bytes (-message-size 4000) exchanges: 100000 (-exchanges 100000)",
        "Rank 0 -> mode roundtrip latency: 231 microseconds, average roundtrip latency: 236.100000 microseconds",
        "Rank 1 -> mode roundtrip latency: 229.500000 microseconds, average roundtrip latency: 234.301570 microseconds",
        "Rank 0 -> average of average roundtrip latencies: 235.200785 microseconds",
    ]
    assert formats.text(r) == formats.latency_checker(r)


def test_ray_network_test_file_and_routed_text():
    # Ray's Name column is the rank's node in the engine's placement (per_rank["node"]).
    r = result("roundtrip", ROUNDTRIP, dict(PER_RANK, node=[0, 0]), ranks_per_node=2,
               request_bytes=4000, exchanges=1000, overlay="debruijn")
    assert formats.ray_network_test(r).splitlines() == [
        "# average and mode round trip latency in microseconds (10^-6 seconds) when requesting "
        "a reply for a message of 4000 bytes",
        "# MessagePassingInterfaceRank\tName\tModeLatencyInMicroseconds\t"
        "AverageLatencyInMicroseconds\tNumberOfExchanges",
        "# AverageForAllRanks: 1081.61",
        "# StandardDeviation: 35.2018",
        "0\tnode-0\t1050\t1081\t1000",
        "1\tnode-0\t1049\t1080\t1000",
    ]
    assert formats.text(r) == formats.latency_checker(r) + "\n" + formats.ray_network_test(r)
    spread = result("roundtrip", ROUNDTRIP, dict(PER_RANK, node=[1, 0]), request_bytes=4000,
                    exchanges=1000, overlay="debruijn")
    assert [line.split("\t")[1] for line in formats.ray_network_test(spread).splitlines()[4:]] == [
        "node-1", "node-0"]


def test_result_json_keys_in_schema_order():
    r = result("pingpong", {"rows": []})
    assert list(r.to_dict()) == ["platform", "workload", "ranks", "ranks_per_node", "seed",
                                 "simulated_seconds", "wall_seconds", "messages", "results", "parameters"]
    assert "\n" not in r.to_json()
