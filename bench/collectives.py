"""IMB collectives at scale: wall time and peak memory of one repetition.

    .venv/bin/python bench/collectives.py [--flow] [--json FILE]

Alltoall at 4096 ranks and Allreduce at 65536 ranks, 16 ranks per node on the qdr-ib
preset widened to the nodes they need (hopsim simulate --nodes), any-source reception
(collectives match any source), one repetition, Open MPI 4.1's choice of algorithm for
each size. Each row runs one simulation through hopsim._engine.simulate; the forked child
reports its own peak (ru_maxrss). The queue transport by default; --flow adds the rows
under SimGrid's flow model that finish in minutes.

This is a benchmark: it measures and reports, it asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import time

from hopsim import _engine, platforms

# kind, ranks, bytes (the algorithm is Open MPI's choice at that size)
CASES = [
    ("alltoall", 4096, 1024),     # modified_bruck: 12 steps
    ("alltoall", 4096, 65536),    # linear_sync (no request limit: linear), n(n-1) messages
    ("allreduce", 65536, 1024),   # nonoverlapping: binomial reduce + k-nomial bcast
    ("allreduce", 65536, 1048576),  # rabenseifner
]
FLOW_CASES = [("alltoall", 4096, 1024), ("allreduce", 65536, 1024)]
PER_NODE = 16


def run(kind: str, ranks: int, size: int, transport: str) -> dict:
    plat = platforms.load("qdr-ib").replace(nodes=ranks // PER_NODE, transport=transport,
                                            reception="any-source")
    work = dict(kind=kind, ranks=ranks, ranks_per_node=PER_NODE, sizes=[size], repetitions=1)
    start = time.perf_counter()
    out = _engine.simulate(plat.to_engine_dict(), work)
    wall = time.perf_counter() - start
    (row,) = out["results"]["rows"]
    return {"kind": kind, "ranks": ranks, "bytes": size, "transport": transport,
            "algorithm": row["algorithm"], "t_max_us": row["t_max_us"],
            "messages": out["messages"], "wall_s": round(wall, 2),
            "peak_mib": round(out["peak_rss_kib"] / 1024)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flow", action="store_true", help="also the flow-transport rows")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = ap.parse_args()
    cases = [(k, n, s, "queue") for k, n, s in CASES]
    if args.flow:
        cases += [(k, n, s, "flow") for k, n, s in FLOW_CASES]
    rows = []
    print(f"{'case':<34} {'algorithm':<16} {'messages':>10} {'t_max us':>12} {'wall s':>8} {'peak MiB':>9}")
    for kind, ranks, size, transport in cases:
        r = run(kind, ranks, size, transport)
        rows.append(r)
        label = f"{kind} {ranks} x {size} B, {transport}"
        print(f"{label:<34} {r['algorithm']:<16} {r['messages']:>10} {r['t_max_us']:>12.1f} "
              f"{r['wall_s']:>8.1f} {r['peak_mib']:>9}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
