"""The effect of probe visibility ([host] probe, docs/model.md) on latency_checker.

    .venv/bin/python bench/probe_modes.py [--platform ec2-10gbe] [--exchanges 10000]

latency_checker on the platform at 10 ranks (1 per node) and 20 ranks (2 per node),
4000-byte request and reply, shared destination sequence, seed 1, under each probe mode:
rank 0's average of averages and the plain mean round trip, and each mode's difference
from "arrival". It measures and reports; it asserts nothing.
"""
from __future__ import annotations

import argparse

import hopsim
from hopsim import platforms

MODES = ("arrival", "header", "post")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--platform", default="ec2-10gbe")
    ap.add_argument("--exchanges", type=int, default=10000)
    args = ap.parse_args()
    base = platforms.load(args.platform)
    print(f"{'ranks':>5} {'per node':>8} {'probe':>8} {'lc avg of avgs us':>18} {'vs arrival':>10} "
          f"{'mean rtt us':>12}")
    for ranks, per_node in ((10, 1), (20, 2)):
        first = None
        for probe in MODES:
            r = hopsim.simulate(base.replace(probe=probe), "roundtrip", ranks=ranks,
                                ranks_per_node=per_node, request_bytes=4000, reply_bytes=4000,
                                exchanges=args.exchanges, destinations="shared", seed=1)
            lc = r.results["lc_average_of_averages_us"]
            first = lc if first is None else first
            print(f"{ranks:>5} {per_node:>8} {probe:>8} {lc:>18.6f} {100 * (lc - first) / first:>+9.2f}% "
                  f"{r.results['rtt_us']['mean']:>12.6f}", flush=True)


if __name__ == "__main__":
    main()
