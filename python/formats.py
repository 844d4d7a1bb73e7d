"""The real tools' own text outputs, so a simulated run reads like a real one.

Layouts follow the tools' printf formats (docs/workloads.md):
osu_latency and osu_bw "%-10d%20.2f", IMB "%13d%13d%13.2f%13.2f%13.2f%13.2f", latency_checker's
lines, and Ray's NetworkTest.txt (C++ stream defaults: integers per rank, 6 significant
digits for the all-rank figures).

A statistic the engine leaves null (no sample kept: every round trip above latency_checker's
1000 us or Ray's 4096 us) prints what the tool prints then. latency_checker's get_result
starts its mode at bin 0 and its average at 0 and divides only when something was kept, so
such a rank prints mode 0 and average 0.000000, and rank 0 averages the averages it
receives. Ray's NetworkTest::getAverageLatency returns its count (0) when nothing was
kept, and RayPlatform's getAverage / getStandardDeviation of an empty list are 0. osu_latency
and IMB have no cut-off; a null there can only be a non-finite number (hopsim.bounds keeps
inputs finite), which printf writes as "nan".
"""
from __future__ import annotations

from .result import Result

# The osu_latency release whose header and column layout this reproduces (5.x; 7.x
# renamed the column "Avg Latency(us)").
OSU_VERSION = "5.8"


def osu_latency(result: Result) -> str:
    lines = [f"# OSU MPI Latency Test v{OSU_VERSION}", f"{'# Size':<10}{'Latency (us)':>20}"]
    for row in result.results["rows"]:
        lines.append(f"{row['bytes']:<10d}{_printf(row['latency_us'], '>20.2f')}")
    return "\n".join(lines) + "\n"


def osu_bw(result: Result) -> str:
    lines = [f"# OSU MPI Bandwidth Test v{OSU_VERSION}", f"{'# Size':<10}{'Bandwidth (MB/s)':>20}"]
    for row in result.results["rows"]:
        lines.append(f"{row['bytes']:<10d}{_printf(row['bandwidth_mbytes_per_sec'], '>20.2f')}")
    return "\n".join(lines) + "\n"


# IMB's block titles and time columns per workload: PingPing prints one time (the
# larger of its two ranks', t[usec]), the chain benchmarks the range over the ranks.
_IMB = {"exchange": ("Exchange", ("t_min_us", "t_max_us", "t_avg_us")),
        "sendrecv": ("Sendrecv", ("t_min_us", "t_max_us", "t_avg_us")),
        "pingping": ("PingPing", ("t_us",))}
_IMB_HEAD = {"t_us": "t[usec]", "t_min_us": "t_min[usec]", "t_max_us": "t_max[usec]",
             "t_avg_us": "t_avg[usec]"}


def imb(result: Result) -> str:
    """IMB-MPI1's block for the workload's benchmark."""
    name, times = _IMB[result.workload]
    head = "".join(f"{h:>13}" for h in
                   ["#bytes", "#repetitions", *(_IMB_HEAD[t] for t in times), "Mbytes/sec"])
    rule = "#" + "-" * (len(head) - 1)  # IMB rules its blocks as wide as the table
    lines = [rule, f"# Benchmarking {name}", f"# #processes = {result.ranks}", rule, head]
    for r in result.results["rows"]:
        lines.append(f"{r['bytes']:13d}{r['repetitions']:13d}"
                     + "".join(_printf(r[k], "13.2f") for k in (*times, "mbytes_per_sec")))
    return "\n".join(lines) + "\n"


def imb_exchange(result: Result) -> str:
    return imb(result)


def latency_checker(result: Result) -> str:
    size, exchanges = result.parameters["request_bytes"], result.parameters["exchanges"]
    modes, means = result.per_rank["lc_mode_us"], result.per_rank["lc_mean_us"]
    lines = [f"Rank 0 -> message size: {size} bytes (-message-size {size}) "
             f"exchanges: {exchanges} (-exchanges {exchanges})"]
    for rank, (mode, mean) in enumerate(zip(modes, means)):
        lines.append(f"Rank {rank} -> mode roundtrip latency: {_lc_number(mode)} microseconds, "
                     f"average roundtrip latency: {_or_zero(mean):f} microseconds")
    lines.append(f"Rank 0 -> average of average roundtrip latencies: "
                 f"{_or_zero(result.results['lc_average_of_averages_us']):f} microseconds")
    return "\n".join(lines) + "\n"


def ray_network_test(result: Result) -> str:
    """The content of Ray's NetworkTest.txt (tab-separated)."""
    per_rank, res = result.per_rank, result.results
    # The engine's placement (hopsim.simulate and live runs put it in per_rank["node"]).
    node_of = per_rank["node"].__getitem__
    lines = [
        "# average and mode round trip latency in microseconds (10^-6 seconds) when "
        f"requesting a reply for a message of {result.parameters['request_bytes']} bytes",
        "# MessagePassingInterfaceRank\tName\tModeLatencyInMicroseconds"
        "\tAverageLatencyInMicroseconds\tNumberOfExchanges",
        f"# AverageForAllRanks: {_or_zero(res['ray_average_for_all_ranks_us']):.6g}",
        f"# StandardDeviation: {_or_zero(res['ray_standard_deviation_us']):.6g}",
    ]
    for rank, (mode, mean, n) in enumerate(zip(per_rank["ray_mode_us"], per_rank["ray_mean_us"],
                                               per_rank["round_trips"])):
        # Ray keeps whole microseconds per rank (integer means).
        lines.append(f"{rank}\tnode-{node_of(rank)}\t{int(_or_zero(mode))}"
                     f"\t{int(_or_zero(mean))}\t{n}")
    return "\n".join(lines) + "\n"


def text(result: Result) -> str:
    """The output of the tool the workload replays; a routed roundtrip adds Ray's file."""
    if result.workload == "pingpong":
        return osu_latency(result)
    if result.workload in _IMB:
        return imb(result)
    if result.workload == "bandwidth":
        return osu_bw(result)
    out = latency_checker(result)
    if result.parameters.get("overlay"):
        out += "\n" + ray_network_test(result)
    return out


def _lc_number(x) -> str:
    # latency_checker bins round trips by whole microseconds, so its mode is an integer.
    x = _or_zero(x)
    return f"{int(x)}" if float(x).is_integer() else f"{x:f}"


def _or_zero(x) -> float:
    """latency_checker's and Ray's value for a statistic over no kept sample."""
    return 0.0 if x is None else x


def _printf(x, spec: str) -> str:
    """printf's rendering of a number; JSON's null is a non-finite value, printed as nan."""
    return format(float("nan") if x is None else x, spec)
