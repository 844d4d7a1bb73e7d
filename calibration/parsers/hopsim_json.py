"""hopsim's own JSON (simulate --json; live runs write the same schema).

The schema has no line structure, so every measurement points at line 1. Results carry
their workload parameters (a "parameters" object: sizes, request and reply bytes,
destinations, reception, ...); a roundtrip result without one (older files) has size
None and cannot be replayed by validate.
"""
from __future__ import annotations

import json
import math

from ...errors import InputError
from ..measurement import NIC_QUEUE_STATISTIC, Measurement, fail

_REQUIRED = ("workload", "ranks", "ranks_per_node", "results")
_ROW_STATS = {"pingpong": ("latency_us",), "exchange": ("t_min_us", "t_max_us", "t_avg_us"),
              "sendrecv": ("t_min_us", "t_max_us", "t_avg_us"), "pingping": ("t_us",),
              "bandwidth": ("bandwidth_mbytes_per_sec",),
              **{c: ("t_min_us", "t_max_us", "t_avg_us")
                 for c in ("alltoall", "allreduce", "allgather", "bcast", "reduce", "barrier")}}
_REPLAYED = ("destinations", "reception", "overlay", "degree")
_POLICIES = ("block", "cyclic")
_ROUNDTRIP_STATS = ("lc_average_of_averages_us", "ray_average_for_all_ranks_us",
                    "ray_standard_deviation_us")


def detect(lines: list[str]) -> bool:
    return bool(lines) and lines[0].lstrip().startswith("{")


def parse(lines: list[str], source: str) -> list[Measurement]:
    def refuse_constant(name):  # NaN, Infinity, -Infinity: not JSON, and not a time
        raise ValueError(f"{name} is not a finite number")

    def finite(text):
        v = float(text)
        if not math.isfinite(v):
            raise ValueError(f"{text} is not a finite number")
        return v

    try:
        doc = json.loads("\n".join(lines), parse_constant=refuse_constant, parse_float=finite)
    except RecursionError:
        raise fail(source, 1, "hopsim JSON nested a few levels deep, not thousands") from None
    except ValueError as e:
        if not isinstance(e, json.JSONDecodeError):
            raise fail(source, 1, f"hopsim JSON with finite numbers ({e})") from None
        raise fail(source, e.lineno, f"hopsim JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(doc, dict) or any(k not in doc for k in _REQUIRED):
        raise fail(source, 1, f"a hopsim result object with keys {', '.join(_REQUIRED)}")
    workload, ranks, rpn, res = doc["workload"], doc["ranks"], doc["ranks_per_node"], doc["results"]
    if not isinstance(ranks, int) or not isinstance(rpn, int) or not isinstance(res, dict):
        raise fail(source, 1, "integer ranks and ranks_per_node and a results object")
    common = dict(tool="hopsim", workload=workload, ranks=ranks, ranks_per_node=rpn,
                  source=source, line=1, version=str(doc.get("platform", "")))
    placed = _placement(doc, source, ranks)
    out = []
    try:
        if workload in _ROW_STATS:
            # The run's own count (parameters), when the rows do not repeat it: a token
            # bucket makes a replay with another count a different experiment.
            params = doc.get("parameters") or {}
            count = params.get("iterations", params.get("repetitions"))
            count = count if isinstance(count, int) and count > 0 else None
            for row in res["rows"]:
                for stat in _ROW_STATS[workload]:
                    if stat == "t_min_us" and row.get(stat) == 0 and workload in ("bcast", "reduce"):
                        # The engine's root of a linear bcast only posts eager sends (and
                        # a reduce's leaves): it waits for nothing, its time is 0. Not a
                        # measured time, and not the statistic compared (t_avg).
                        continue
                    # A bandwidth row says its window and timed windows.
                    replay = (("window", int(row["window"])),) if "window" in row else ()
                    replay += placed
                    # Its warm-up, when the run set one (osu's -x).
                    warmup = (doc.get("parameters") or {}).get("warmup")
                    if isinstance(warmup, int) and warmup >= 0:
                        replay += (("warmup", warmup),)
                    # A collective run with a forced algorithm replays with it.
                    forced = (doc.get("parameters") or {}).get("algorithm")
                    if forced:
                        replay += (("algorithm", str(forced)),)
                    out.append(Measurement(size=int(row["bytes"]), statistic=stat,
                                           value=float(row[stat]), replay=replay,
                                           repetitions=row.get("repetitions",
                                                               row.get("iterations", count)),
                                           **common))
        elif workload == "roundtrip":
            params = doc.get("parameters") or {}
            size, reply = params.get("request_bytes"), params.get("reply_bytes")
            replay = tuple(sorted((k, v) for k, v in params.items()
                                  if k in _REPLAYED and v not in (None, "", 0)))
            if params and isinstance(doc.get("seed"), int):
                replay += (("seed", doc["seed"]),)
            replay += placed
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
    except InputError:
        raise  # a Measurement's own range check, already naming file:line
    except (KeyError, TypeError, ValueError) as e:
        raise fail(source, 1, f"the {workload} results of hopsim's schema (missing or bad "
                              f"{e})") from None
    if not out:
        raise fail(source, 1, "at least one result row")
    return out + _nic_queue(doc, common)


def _nic_queue(doc: dict, common: dict) -> list[Measurement]:
    """A live run's sampled NIC queue (hopsim live --sample-nic-queue: live.nic_queue), as
    its 99th percentile in bytes: what calibrate sets network.nic_queue_bytes to."""
    q = (doc.get("live") or {}).get("nic_queue")
    if q is None:
        return []
    if not isinstance(q, dict) or not isinstance(q.get("p99_bytes"), int) or not isinstance(q.get("samples"), int) \
            or q["samples"] < 1:
        raise fail(common["source"], 1, "live.nic_queue with integer p99_bytes and samples >= 1", str(q)[:80])
    return [Measurement(**{**common, "workload": "nic_queue"}, size=None, statistic=NIC_QUEUE_STATISTIC,
                        value=float(q["p99_bytes"]), repetitions=q["samples"])]


def _placement(doc: dict, source: str, ranks: int) -> tuple:
    """The placement the run recorded (parameters.placement: block, cyclic or the map),
    as a replay pair; none for files from before placements were recorded (block)."""
    value = (doc.get("parameters") or {}).get("placement")
    if value is None:
        return ()
    if value in _POLICIES:
        return (("placement", value),)
    if (isinstance(value, list) and len(value) == ranks
            and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value)):
        return (("placement", tuple(value)),)
    raise fail(source, 1, f"parameters.placement block, cyclic or a list of {ranks} node indices",
               str(value))
