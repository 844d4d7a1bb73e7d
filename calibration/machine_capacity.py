"""The machine that runs every node of an emulated cluster, as a shared capacity
(`hopsim calibrate --machine-gbps X|FILE[,FILE...]`).

An emulated cluster's hosts are network namespaces on one machine: every byte between
them is copied and its packets processed on that machine's cores, whatever tbf shapes
each host's link. Together the hosts cannot move more than the machine does, a shared
switch in effect: the engine's backbone (`network.backbone_gbps`, one link that all
node-to-node bytes share). A 2-host run whose links bind (any tbf the machine outruns)
never shows it, and 4 hosts can hit it: on this repository's 2-core machine, an
uncapped exchange moved 24-29 Gbit/s between 2 hosts and 23-33 between 4
(docs/validation/rigs-idle/machine-capacity/).

Measured once per machine, on uncapped links, with any number of hosts from 2:

    hopsim live --workload exchange --ranks 2 --emulate-cluster 2 --link-rate none \\
        --sizes 1048576 --out DIR

X = node-to-node bytes of one repetition / its t_avg at the run's largest size, where
IMB Exchange's rank r sends one message to r - 1 and one to r + 1 (ring order) and a
message crosses when the two ranks are on different nodes; the median over the files
given. Not fitted: the capacity is the machine's, given, and applied to the fitted
platform (the backbone at X, or the fit's own backbone where that is smaller).
"""
from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

FLAG = "--machine-gbps"


@dataclass(frozen=True)
class MachineCapacity:
    gbps: float
    how: str  # the provenance: given as a number, or measured by which runs


def crossing_messages(node_of_rank: list[int]) -> int:
    """Messages of one IMB Exchange repetition that go between nodes: rank r sends to
    r - 1 and r + 1 (mod ranks; with 2 ranks both go to the other)."""
    n = len(node_of_rank)
    return sum(1 for r in range(n) for q in ((r - 1) % n, (r + 1) % n)
               if node_of_rank[q] != node_of_rank[r])


def gbps_of_run(path: Path) -> float:
    """Node-to-node Gbit/s of one hopsim live exchange on uncapped links, at its largest
    size (module docstring)."""
    where = f"{FLAG}: {path}"
    try:
        d = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{where}: cannot read it ({e.__class__.__name__})") from None
    except json.JSONDecodeError:
        raise InputError(f"{where}: not a JSON file (expected a hopsim live result of an "
                         f"exchange on uncapped links)") from None
    live = d.get("live") if isinstance(d, dict) else None
    if not isinstance(live, dict) or d.get("workload") != "exchange":
        raise InputError(f"{where}: expected a hopsim live result of --workload exchange "
                         f"(its result.json), got another kind of file")
    if live.get("link_rate") != "none":
        raise InputError(f"{where}: its links were capped ({live.get('link_rate')!r}): the "
                         f"machine's capacity needs --link-rate none")
    nodes = live.get("node_of_rank")
    rows = [r for r in d.get("results", {}).get("rows", [])
            if isinstance(r, dict) and r.get("bytes", 0) > 0 and r.get("t_avg_us", 0) > 0]
    if not isinstance(nodes, list) or len(set(nodes)) < 2 or not rows:
        raise InputError(f"{where}: needs 2 hosts or more and a size above 0 B with its time")
    top = max(rows, key=lambda r: r["bytes"])
    return crossing_messages(nodes) * top["bytes"] * 8 / top["t_avg_us"] / 1e3


def parse(text: str) -> MachineCapacity:
    """--machine-gbps's value: a rate in Gbit/s, or FILE[,FILE...] (module docstring)."""
    try:
        x = float(text)
    except ValueError:
        x = None
    if x is not None:
        if not x > 0 or x == float("inf"):
            raise InputError(f"{FLAG}: expected a rate above 0 Gbit/s, got {text!r}")
        return MachineCapacity(x, f"given by {FLAG}")
    paths = [Path(p) for p in text.split(",") if p]
    if not paths:
        raise InputError(f"{FLAG}: expected a rate in Gbit/s or hopsim live result files, got {text!r}")
    for p in paths:
        if not p.is_file():
            raise InputError(f"{FLAG}: {str(p)!r} is not a file (expected a rate in Gbit/s or "
                             f"hopsim live result files)")
    each = [gbps_of_run(p) for p in paths]
    x = float(f"{statistics.median(each):.6g}")
    return MachineCapacity(x, (f"measured by {FLAG}: the median over {len(paths)} live "
                               f"exchange(s) on uncapped links of node-to-node bytes per "
                               f"second at the largest size ("
                               + ", ".join(f"{p}: {g:.4g}" for p, g in zip(paths, each))
                               + " Gbit/s)"))


def apply(p, machine: MachineCapacity):
    """(platform, report line): p's backbone at the machine's rate, or p's own where that
    is smaller, with its provenance."""
    key = "network.backbone_gbps"
    if 0 < p.backbone_gbps <= machine.gbps:
        return p, (f"machine's capacity: {machine.gbps} Gbit/s ({machine.how}) is above the "
                   f"fit's own backbone, {p.backbone_gbps} Gbit/s, which stays")
    prov = (f"{machine.how}: the machine that ran every node moves at most {machine.gbps} "
            f"Gbit/s between them (an emulated cluster's packet processing, a shared switch "
            f"in effect); not fitted, applied to the fitted platform")
    return (p.replace(backbone_gbps=machine.gbps, provenance={**p.provenance, key: prov}),
            f"machine's capacity: {key} = {machine.gbps}    ({prov})")
