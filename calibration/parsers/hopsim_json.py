"""hopsim's own JSON (simulate --json; live runs write the same schema).

The schema has no line structure, so every measurement points at line 1. Results carry
their workload parameters (a "parameters" object: sizes, request and reply bytes,
destinations, reception, ...); a roundtrip result without one (older files) has size
None and cannot be replayed by validate.
"""
from __future__ import annotations

import json

from ..measurement import Measurement, fail

_REQUIRED = ("workload", "ranks", "ranks_per_node", "results")
_ROW_STATS = {"pingpong": ("latency_us",), "exchange": ("t_min_us", "t_max_us", "t_avg_us"),
              "sendrecv": ("t_min_us", "t_max_us", "t_avg_us"), "pingping": ("t_us",),
              "bandwidth": ("bandwidth_mbytes_per_sec",),
              **{c: ("t_min_us", "t_max_us", "t_avg_us")
                 for c in ("alltoall", "allreduce", "allgather", "bcast", "reduce", "barrier")}}
_REPLAYED = ("destinations", "reception", "overlay", "degree")
_ROUNDTRIP_STATS = ("lc_average_of_averages_us", "ray_average_for_all_ranks_us",
                    "ray_standard_deviation_us")


def detect(lines: list[str]) -> bool:
    return bool(lines) and lines[0].lstrip().startswith("{")


def parse(lines: list[str], source: str) -> list[Measurement]:
    try:
        doc = json.loads("\n".join(lines))
    except json.JSONDecodeError as e:
        raise fail(source, e.lineno, f"hopsim JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(doc, dict) or any(k not in doc for k in _REQUIRED):
        raise fail(source, 1, f"a hopsim result object with keys {', '.join(_REQUIRED)}")
    workload, ranks, rpn, res = doc["workload"], doc["ranks"], doc["ranks_per_node"], doc["results"]
    if not isinstance(ranks, int) or not isinstance(rpn, int) or not isinstance(res, dict):
        raise fail(source, 1, "integer ranks and ranks_per_node and a results object")
    common = dict(tool="hopsim", workload=workload, ranks=ranks, ranks_per_node=rpn,
                  source=source, line=1, version=str(doc.get("platform", "")))
    out = []
    try:
        if workload in _ROW_STATS:
            for row in res["rows"]:
                for stat in _ROW_STATS[workload]:
                    # A bandwidth row says its window and timed windows.
                    replay = (("window", int(row["window"])),) if "window" in row else ()
                    # A collective run with a forced algorithm replays with it.
                    forced = (doc.get("parameters") or {}).get("algorithm")
                    if forced:
                        replay = (("algorithm", str(forced)),)
                    out.append(Measurement(size=int(row["bytes"]), statistic=stat,
                                           value=float(row[stat]), replay=replay,
                                           repetitions=row.get("repetitions",
                                                               row.get("iterations")),
                                           **common))
        elif workload == "roundtrip":
            params = doc.get("parameters") or {}
            size, reply = params.get("request_bytes"), params.get("reply_bytes")
            replay = tuple(sorted((k, v) for k, v in params.items()
                                  if k in _REPLAYED and v not in (None, "", 0)))
            if params and isinstance(doc.get("seed"), int):
                replay += (("seed", doc["seed"]),)
            common["replay"] = replay
            for stat in _ROUNDTRIP_STATS:
                if stat in res:
                    out.append(Measurement(size=size, reply_size=reply, statistic=stat,
                                           value=float(res[stat]),
                                           repetitions=params.get("exchanges"), **common))
            if "rtt_us" in res:   # a live latency_checker run prints no single round trip
                out.append(Measurement(size=size, reply_size=reply, statistic="rtt_mean_us",
                                       value=float(res["rtt_us"]["mean"]),
                                       repetitions=params.get("exchanges"), **common))
        else:
            raise fail(source, 1, f"workload {', '.join(_ROW_STATS)} or roundtrip",
                       str(workload))
    except (KeyError, TypeError, ValueError) as e:
        raise fail(source, 1, f"the {workload} results of hopsim's schema (missing or bad "
                              f"{e})") from None
    if not out:
        raise fail(source, 1, "at least one result row")
    return out
