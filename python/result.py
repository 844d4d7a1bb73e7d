"""Result: what one simulation gives back, in the issue's JSON schema plus the platform's node count and values hash."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

# The schema's keys, in the order they are written.
JSON_KEYS = ("platform", "platform_nodes", "platform_hash", "workload", "ranks",
             "ranks_per_node", "seed", "simulated_seconds", "wall_seconds", "messages",
             "results", "parameters")


@dataclass(frozen=True)
class Result:
    """One run. results is the engine's summary for the workload (see the README);
    per_rank (roundtrip only: lc_mode_us, lc_mean_us, ray_mode_us, ray_mean_us,
    round_trips; and node, the engine's placement, for every workload; lists indexed by rank) feeds the tools' text formats and is not part of
    the JSON. parameters (the workload's parameters as a user writes them, plus the
    reception policy) is, so that a result can be replayed (hopsim validate)."""

    platform: str
    workload: str
    ranks: int
    ranks_per_node: int
    seed: int
    simulated_seconds: float
    wall_seconds: float
    messages: int
    results: dict
    per_rank: dict = field(default_factory=dict, repr=False)
    parameters: dict = field(default_factory=dict)
    # The platform beyond its name: its node count and Platform.values_hash(), so that two
    # results under one name but different values are told apart (None: not recorded).
    platform_nodes: int | None = None
    platform_hash: str | None = None
    # simulate(trace=True): {"columns": [...], "rows": [[...], ...]}, a row per transfer
    # (docs/workloads.md, "Trace"); not part of the JSON, written by simulate --trace.
    trace: dict | None = field(default=None, repr=False, compare=False)

    def trace_csv(self) -> str:
        """The trace as CSV text, a header line and a row per transfer."""
        if self.trace is None:
            raise ValueError("this result was not traced (simulate(..., trace=True))")
        import csv
        import io

        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.trace["columns"])
        w.writerows(self.trace["rows"])
        return buf.getvalue()

    def to_dict(self) -> dict:
        out = {k: getattr(self, k) for k in JSON_KEYS
               if not (k.startswith("platform_") and getattr(self, k) is None)}
        out["parameters"] = dict(self.parameters)
        return out

    def to_json(self, indent: int | None = None) -> str:
        """The issue's JSON object: one line, or indented."""
        return json.dumps(self.to_dict(), indent=indent)
