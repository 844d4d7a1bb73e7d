"""Measured peak memory of runs against hopsim.bounds.memory_estimate(), the estimate that
refuses a run before it starts.

    .venv/bin/python bench/memory.py [--huge] [--json FILE]

Each row runs one simulation through hopsim._engine.simulate (the forked child reports its
own peak, ru_maxrss, as peak_rss_kib) and prints it beside the estimate and their ratio,
under the flow transport unless the row says "queue" (network.transport, docs/model.md).
The estimate is meant as an upper bound: a ratio (estimate / measured) below 1 on any row
means the constants in hopsim.bounds must grow. Rows vary one term of the formula at a time:
ranks (any-to-any round trips, 1 rank per node), nodes (16 ranks per node), recorded round
trips (2 ranks, many exchanges), the random overlay's n x n table, the exchange and sendrecv
workloads, and osu_bw's largest window.
--huge adds 32768 and 65536 ranks, and 2^20 ranks on the queue transport (minutes).

It also times `hopsim topology` statistics (all n(n-1) routes) at growing sizes, the
measurement behind bounds' topology.ranks limit.

This is a benchmark: it measures and reports, it asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from hopsim import _engine, bounds


def platform(nodes: int, cores: int, transport: str = "flow") -> dict:
    return dict(name="mem", nodes=nodes, cores=cores, latency_us=5, bandwidth_gbps=10,
                intra_latency_us=1, intra_bandwidth_gbps=50, pass_us=1.0,
                reception="any-source", transport=transport)


CASES = [
    # label, nodes, cores, workload dict
    ("roundtrip 1024 ranks", 1024, 1, dict(kind="roundtrip", ranks=1024, exchanges=4)),
    ("roundtrip 4096 ranks", 4096, 1, dict(kind="roundtrip", ranks=4096, exchanges=4)),
    ("roundtrip 16384 ranks", 16384, 1, dict(kind="roundtrip", ranks=16384, exchanges=2)),
    ("roundtrip 4096 ranks, 16/node", 256, 16,
     dict(kind="roundtrip", ranks=4096, ranks_per_node=16, exchanges=1)),
    ("roundtrip 2 ranks, 2^20 exchanges", 2, 1, dict(kind="roundtrip", ranks=2, exchanges=2**20)),
    ("random overlay 4096 ranks", 4096, 1,
     dict(kind="roundtrip", ranks=4096, exchanges=2, overlay="random", reply_bytes=0)),
    ("de Bruijn overlay 4096 ranks", 4096, 1,
     dict(kind="roundtrip", ranks=4096, exchanges=2, overlay="debruijn", reply_bytes=0)),
    ("exchange 4096 ranks", 4096, 1, dict(kind="exchange", ranks=4096, sizes=[1024], repetitions=2)),
    ("sendrecv 4096 ranks", 4096, 1, dict(kind="sendrecv", ranks=4096, sizes=[1024], repetitions=2)),
    ("bandwidth window 1000", 2, 1, dict(kind="bandwidth", ranks=2, sizes=[1024], iterations=2,
                                         window=1000)),
    ("queue: roundtrip 16384 ranks", 16384, 1, dict(kind="roundtrip", ranks=16384, exchanges=2)),
    ("queue: roundtrip 65536 ranks, 16/node", 4096, 16,
     dict(kind="roundtrip", ranks=65536, ranks_per_node=16, exchanges=2)),
    ("queue: de Bruijn overlay 65536 ranks", 65536, 1,
     dict(kind="roundtrip", ranks=65536, exchanges=2, overlay="debruijn", degree=16, reply_bytes=0)),
    ("queue: exchange 65536 ranks", 65536, 1, dict(kind="exchange", ranks=65536, sizes=[1024], repetitions=2)),
]
HUGE = [
    ("roundtrip 32768 ranks", 32768, 1, dict(kind="roundtrip", ranks=32768, exchanges=1)),
    ("roundtrip 65536 ranks", 65536, 1, dict(kind="roundtrip", ranks=65536, exchanges=1)),
    ("queue: de Bruijn overlay 2^20 ranks", 2**20, 1,
     dict(kind="roundtrip", ranks=2**20, exchanges=1, overlay="debruijn", degree=32, reply_bytes=0)),
]


def measure(label, nodes, cores, work) -> dict:
    work = dict(dict(ranks_per_node=1, seed=1), **work)
    transport = "queue" if label.startswith("queue") else "flow"
    start = time.perf_counter()
    out = _engine.simulate(platform(nodes, cores, transport), work)
    wall = time.perf_counter() - start
    est = bounds.memory_estimate(nodes, work["ranks"], work["kind"], work.get("exchanges", 0),
                                 work.get("overlay", ""), transport=transport)
    peak = out["peak_rss_kib"] * 1024
    return {"case": label, "nodes": nodes, "ranks": work["ranks"], "wall_s": round(wall, 2),
            "peak_mib": round(peak / 2**20, 1), "estimate_mib": round(est / 2**20, 1),
            "ratio": round(est / peak, 2)}


def topology_time(family: str, ranks: int) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "hopsim", "topology", family, "--ranks", str(ranks),
                    "--json"], check=True, capture_output=True)
    return time.perf_counter() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--huge", action="store_true")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    print(f"load average at start: {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    print(f"{'case':<36} {'peak MiB':>9} {'estimate MiB':>13} {'ratio':>6} {'wall s':>7}")
    for case in CASES + (HUGE if args.huge else []):
        r = measure(*case)
        rows.append(r)
        print(f"{r['case']:<36} {r['peak_mib']:>9} {r['estimate_mib']:>13} {r['ratio']:>6} "
              f"{r['wall_s']:>7}", flush=True)
    topo = []
    for family, n in (("debruijn", 4096), ("debruijn", 16384), ("complete", 4096)):
        t = topology_time(family, n)
        topo.append({"family": family, "ranks": n, "wall_s": round(t, 2)})
        print(f"hopsim topology {family} --ranks {n}: {t:.2f} s", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": rows, "topology": topo}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
