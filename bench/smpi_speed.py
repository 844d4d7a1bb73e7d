"""hopsim against SimGrid's SMPI running hopbench, in messages per wall second.

    .venv/bin/python bench/smpi_speed.py [--ranks 64,256,1024] [--messages M] [--repeats K]
                                         [--json FILE]

Each row is the same roundtrip workload (latency_checker's pass loop: 4000-byte request
and reply, any-source reception, independent destinations) on the same platform: a star
of single-rank nodes, 10 us, 10 Gbit/s, a 1 us pass (SMPI needs a positive pass: a free
MPI_Iprobe never advances its clock). hopsim runs it in its engine (hopsim.simulate);
SMPI runs hopbench compiled with smpicc under smpirun, on the platform and --cfg flags of
`hopsim platforms export` (hopsim.live.smpi). Both are timed from outside, start-up
included (smpirun's own start-up is about 0.3 s); the fastest of K runs of each is kept,
since noise on a shared machine only adds time. Messages are the transfers both count
(2 per round trip); the round trips per rank shrink with the rank count so that every
row moves about the same number of messages. "sim diff" is SMPI's mean round trip over
hopsim's, minus one: the models' disagreement on this workload (docs/live.md).

This is a benchmark: it measures and reports, it asserts no speed.
"""
from __future__ import annotations

import argparse
import json
import os
import time

import hopsim
from hopsim.live.smpi import build_hopbench, run_smpi
from hopsim.errors import InputError
from hopsim.platforms import Platform

MESSAGES = 65536


def platform(ranks: int) -> Platform:
    return Platform(name=f"bench-{ranks}", nodes=ranks, cores=1, latency_us=10.0,
                    bandwidth_gbps=10.0, pass_us=1.0)


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def row(ranks: int, repeats: int, messages: int = MESSAGES, smpi_timeout: float = 1800) -> dict:
    exchanges = max(1, messages // (2 * ranks))
    p = platform(ranks)
    best_h = best_s = float("inf")
    smpi = None
    for _ in range(repeats):
        wall, sim = timed(lambda: hopsim.simulate(p, "roundtrip", ranks=ranks, exchanges=exchanges))
        best_h = min(best_h, wall)
        try:
            wall, (smpi, _) = timed(lambda: run_smpi(p, "roundtrip", ranks, exchanges=exchanges,
                                                     timeout=smpi_timeout))
        except InputError as e:  # SMPI's time limit: report a lower bound
            if "timeout" not in str(e):
                raise
            wall = smpi_timeout
        best_s = min(best_s, wall)
    msgs = sim.messages
    if smpi is None:
        return {"ranks": ranks, "round_trips_per_rank": exchanges, "messages": msgs,
                "hopsim_wall_s": best_h, "smpi_wall_s": f">{smpi_timeout:g}",
                "hopsim_msgs_per_s": msgs / best_h, "smpi_msgs_per_s": f"<{msgs / smpi_timeout:.0f}",
                "speedup": f">{smpi_timeout / best_h:.0f}", "sim_diff": None,
                "load_average": os.getloadavg()[0]}
    assert smpi["messages"] == msgs  # the same traffic, or the comparison means nothing
    return {"ranks": ranks, "round_trips_per_rank": exchanges, "messages": msgs,
            "hopsim_wall_s": best_h, "smpi_wall_s": best_s,
            "hopsim_msgs_per_s": msgs / best_h, "smpi_msgs_per_s": msgs / best_s,
            "speedup": best_s / best_h,
            "sim_diff": smpi["results"]["rtt_us"]["mean"] / sim.results["rtt_us"]["mean"] - 1,
            "load_average": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="64,256,1024")
    ap.add_argument("--messages", type=int, default=MESSAGES,
                    help=f"about this many messages per row (default {MESSAGES})")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--smpi-timeout", type=float, default=1800, metavar="S",
                    help="give SMPI this long per run; beyond it the row is a lower bound")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    build_hopbench()  # compiled once, outside the timings
    rows = []
    print(f"{'ranks':>6} {'msgs':>8} {'hopsim s':>9} {'SMPI s':>9} {'hopsim msg/s':>13} "
          f"{'SMPI msg/s':>11} {'speedup':>8} {'sim diff':>9} {'load':>5}")
    for n in (int(x) for x in args.ranks.split(",")):
        r = row(n, args.repeats, args.messages, args.smpi_timeout)
        rows.append(r)
        if isinstance(r["speedup"], str):
            print(f"{r['ranks']:>6} {r['messages']:>8} {r['hopsim_wall_s']:>9.3f} {r['smpi_wall_s']:>9} "
                  f"{r['hopsim_msgs_per_s']:>13.0f} {r['smpi_msgs_per_s']:>11} {r['speedup']:>7}x "
                  f"{'':>9} {r['load_average']:>5.1f}", flush=True)
            continue
        print(f"{r['ranks']:>6} {r['messages']:>8} {r['hopsim_wall_s']:>9.3f} {r['smpi_wall_s']:>9.3f} "
              f"{r['hopsim_msgs_per_s']:>13.0f} {r['smpi_msgs_per_s']:>11.0f} {r['speedup']:>7.1f}x "
              f"{r['sim_diff']:>+8.1%} {r['load_average']:>5.1f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
