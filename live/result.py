"""hopbench's raw records -> a hopsim Result, the same shape `hopsim simulate` gives.

hopbench prints measurements only (docs/live.md lists its records); the figures are
computed here, the round-trip ones by the engine's own statistics (simulator/statistics.cpp
through hopsim._engine.statistics), the functions `hopsim simulate` reports with: a live
run and a simulated one are summarised by one definition.
"""
from __future__ import annotations

import math

from .._engine import statistics as st
from ..errors import InputError
from ..result import Result


def parse_raw(text: str, source: str = "hopbench output") -> dict:
    """The records of one hopbench run. InputError names the line that is wrong."""
    raw = {"workload": None, "ranks": 0, "hosts": {}, "pingpong": [], "exchange": [],
           "rtt": {}, "relays": [], "elapsed": None, "messages": None, "complete": False}
    for n, line in enumerate(text.splitlines(), 1):
        f = line.split()
        if not f:
            continue
        try:
            if f[0] == "hopbench":
                raw["workload"], raw["ranks"] = f[2], int(f[4])
            elif f[0] == "host":
                raw["hosts"][int(f[1])] = " ".join(f[2:])
            elif f[0] == "pingpong":
                raw["pingpong"].append((int(f[1]), int(f[2]), int(f[3]), float(f[4])))
            elif f[0] == "exchange":
                raw["exchange"].append((int(f[1]), int(f[2]), [float(x) for x in f[3:]]))
            elif f[0] == "rtt":
                values = [int(x) for x in f[3:]]
                if len(values) != int(f[2]):
                    raise ValueError
                raw["rtt"][int(f[1])] = values
            elif f[0] == "relays":
                raw["relays"] = [int(x) for x in f[1:]]
            elif f[0] == "elapsed":
                raw["elapsed"] = float(f[1])
            elif f[0] == "messages":
                raw["messages"] = int(f[1])
            elif f[0] == "end":
                raw["complete"] = True
            # anything else (Open MPI's own notices) is not hopbench's
        except (IndexError, ValueError):
            raise InputError(f"{source}:{n}: malformed hopbench record {line[:60]!r}") from None
    if raw["workload"] is None or not raw["complete"]:
        raise InputError(f"{source}: truncated hopbench output (no header or no 'end' record)")
    return raw


def pingpong_rows(raw: dict) -> list[dict]:
    rows = []
    for bytes_, _warmup, timed, seconds in raw["pingpong"]:
        latency = seconds * 1e6 / (2 * timed)  # osu_latency: half the round trip
        rows.append({"bytes": bytes_, "latency_us": latency,
                     "bandwidth_mbytes_per_sec": bytes_ / latency if latency > 0 else 0.0})
    return rows


def exchange_rows(raw: dict) -> list[dict]:
    rows = []
    for bytes_, reps, per_rank in raw["exchange"]:
        t = [s * 1e6 for s in per_rank]
        t_max = max(t)
        rows.append({"bytes": bytes_, "repetitions": reps, "t_min_us": min(t), "t_max_us": t_max,
                     "t_avg_us": sum(t) / len(t),
                     # IMB Exchange: 4 messages of `bytes` per repetition, MB = 10^6 bytes
                     "mbytes_per_sec": 4.0 * bytes_ / t_max if t_max > 0 else 0.0})
    return rows


def roundtrip_figures(raw: dict, routed: bool) -> tuple[dict, dict]:
    """(results, per_rank) with the engine's keys (simulator/workload_roundtrip.cpp)."""
    ranks = raw["ranks"]
    per = [raw["rtt"][r] for r in range(ranks)]
    everything = sorted(v for rtts in per for v in rtts)
    lc = [st.latency_checker_rank(r) for r in per]
    ray = [(st.ray_mode_latency(r), st.ray_average_latency(r)) for r in per]
    means = [st.mean_sd(r)[0] for r in per]
    mean_avg, mean_sd = st.mean_sd(means)
    ray_avg, ray_sd = st.ray_average_for_all_ranks([m for _, m in ray])
    results = {
        "rtt_us": {"mean": st.mean_sd(everything)[0],
                   "p50": st.percentile(everything, 50),
                   "p99": st.percentile(everything, 99),
                   "min": float(everything[0]), "max": float(everything[-1])},
        "per_rank_mean_us": {"average": mean_avg, "sd": mean_sd},
        "lc_average_of_averages_us": st.latency_checker_average_of_averages([a for _, a in lc]),
        "ray_average_for_all_ranks_us": ray_avg,
        "ray_standard_deviation_us": ray_sd,
    }
    if routed:
        # Every transfer is one hop; requests and replies each arrive once.
        delivered = 2 * sum(len(r) for r in per)
        relays = [float(x) for x in raw["relays"]]
        relay_mean, relay_sd = st.mean_sd(relays)
        results["hops"] = {"mean": raw["messages"] / delivered}
        results["relays"] = {"mean": relay_mean, "sd": relay_sd, "max": max(raw["relays"])}
    per_rank = {"lc_mode_us": [float(m) for m, _ in lc], "lc_mean_us": [a for _, a in lc],
                "ray_mode_us": [float(m) for m, _ in ray], "ray_mean_us": [float(a) for _, a in ray],
                "round_trips": [len(r) for r in per]}
    return results, per_rank


def to_result(raw: dict, *, platform: str, ranks_per_node: int, seed: int, parameters: dict,
              wall_seconds: float, node_map: list[int], platform_nodes: int | None = None,
              platform_hash: str | None = None) -> Result:
    kind = raw["workload"]
    per_rank: dict = {}
    if kind == "pingpong":
        results = {"rows": pingpong_rows(raw)}
        measured = sum(s for *_, s in raw["pingpong"])
    elif kind == "exchange":
        results = {"rows": exchange_rows(raw)}
        measured = sum(max(t) * reps for _, reps, t in raw["exchange"])
    else:
        results, per_rank = roundtrip_figures(raw, routed=bool(parameters.get("overlay")))
        measured = raw["elapsed"]
    return Result(platform=platform, workload=kind, ranks=raw["ranks"],
                  ranks_per_node=ranks_per_node, seed=seed,
                  simulated_seconds=measured if measured is not None else math.nan,
                  wall_seconds=wall_seconds, messages=raw["messages"], results=results,
                  per_rank=dict(per_rank, node=list(node_map)), parameters=parameters,
                  platform_nodes=platform_nodes, platform_hash=platform_hash)


def result_dict(result: Result, live: dict) -> dict:
    """The JSON of a live run: simulate's keys (parameters included), then per_rank and a `live` block
    (what ran where: tool, hosts, mpirun command, link rate)."""
    out = result.to_dict()
    per_rank = {k: v for k, v in result.per_rank.items() if k != "node"}  # live.node_of_rank has it
    if per_rank:
        out.setdefault("per_rank", per_rank)
    out["live"] = live
    return out
