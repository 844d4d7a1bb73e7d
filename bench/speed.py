"""hopsim against the bare S4U yardstick (simgrid-notes.md), in messages per wall second.

    .venv/bin/python bench/speed.py [--routed] [--huge] [--repeats K] [--json FILE]

Every row simulates the roundtrip workload on a star of single-rank nodes with zero host
costs and any-source reception, once with hopsim (hopsim._engine.simulate, which forks
and runs the engine in a child) and once with bench/bare_s4u (a process), on the same
platform built by the same code. Both are timed here around the call, start-up and
teardown included. The two alternate, K times each, so that they share the noise of a
shared machine; the fastest of the K runs of each is reported, since noise only ever
adds time. "ratio" is hopsim's messages per wall second over the bare program's; "cpu
ratio" the same in messages per CPU second (fastest runs again), which other jobs on the
machine disturb less. Peak memory: hopsim's is that of its forked engine, which starts
with the pages of this Python process (python_rss_kib in the JSON); the bare program's
is its own.

Rows:
  any-to-any at 1024, 4096 and 16384 ranks: 4000-byte request and reply, the same
      524288 messages at every size. hopsim and the bare program draw the same
      destinations from the same per-rank streams, so their simulated times agree (the
      "sim diff" column, relative): they move the same messages. They may differ in the
      last digits where two messages to one rank overlap: hopsim receives the first to
      arrive, the bare program's receive takes the first posted (SimGrid's mailbox order).
  --routed: Kautz K(63,2) = 4032, de Bruijn B(4,6) = 4096 and random at 4096 ranks,
      4000-byte request and 0-byte reply as in Ray's network test, the same 262144 round
      trips; hopsim's messages are then transfers, relays included. Compared with the
      bare program at the same rank count (direct, 4000-byte request, 0-byte reply).
  --huge: any-to-any at 65536 ranks and de Bruijn B(4,8) at 65536 ranks.

This is a benchmark: it measures and reports, it asserts no speed.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import resource
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROUND_TRIPS = 262144  # 524288 messages when every round trip is two direct messages
REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Case:
    label: str
    ranks: int
    reply_bytes: int
    overlay: str = ""
    degree: int = 0

    @property
    def exchanges(self) -> int:
        return max(1, round(ROUND_TRIPS / self.ranks))


def find_bare(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    candidates = []
    try:
        import hopsim
        candidates.append(Path(hopsim.__file__).resolve().parent / "bin" / "bare_s4u")
    except ImportError:
        pass
    candidates += [Path(p) for p in sorted(glob.glob(str(REPO / "build" / "*" / "bench" / "bare_s4u")))]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    sys.exit("speed.py: bare_s4u not found (install hopsim with `.venv/bin/pip install ./` "
             "or pass --bare PATH)")


def run_hopsim(case: Case, args) -> dict:
    from hopsim import _engine
    from hopsim.api import prepare
    from hopsim.platforms import Platform

    platform = Platform(name=f"bench-{case.ranks}", nodes=case.ranks, cores=1,
                        latency_us=args.latency_us, bandwidth_gbps=args.bandwidth_gbps)
    params = {"request_bytes": args.bytes, "reply_bytes": case.reply_bytes,
              "exchanges": case.exchanges}
    if case.overlay:
        params.update(overlay=case.overlay, degree=case.degree)
    _, work, platform_spec = prepare(platform, "roundtrip", ranks=case.ranks, seed=args.seed,
                                     **params)
    workload_spec = work.to_engine_dict()
    cpu = children_cpu_seconds()
    start = time.perf_counter()
    out = _engine.simulate(platform_spec, workload_spec)
    wall = time.perf_counter() - start
    return {"wall_seconds": wall, "cpu_seconds": children_cpu_seconds() - cpu, "messages": out["messages"],
            "simulated_seconds": out["simulated_seconds"], "peak_rss_kib": out["peak_rss_kib"],
            "hops_mean": out["results"].get("hops", {}).get("mean")}


def overlay_build_seconds(case: Case, args) -> float:
    """How long building the overlay takes, a part of each hopsim run of the case.

    The engine builds it with the same function at the start of every run; for tables
    (random) it is a fixed cost that no message pays for.
    """
    from hopsim import _engine

    start = time.perf_counter()
    _engine.make_overlay(case.overlay, case.ranks, case.degree, args.seed)
    return time.perf_counter() - start


def bare_command(bare: Path, case: Case, args) -> list[str]:
    return [str(bare), str(case.ranks), str(case.exchanges), str(args.bytes), repr(args.latency_us),
            repr(args.bandwidth_gbps), str(case.reply_bytes), str(args.seed)]


def run_bare(bare: Path, case: Case, args) -> dict:
    cpu = children_cpu_seconds()
    start = time.perf_counter()
    done = subprocess.run(bare_command(bare, case, args), capture_output=True, text=True)
    wall = time.perf_counter() - start
    cpu = children_cpu_seconds() - cpu
    if done.returncode != 0:
        sys.exit(f"speed.py: bare_s4u failed ({done.returncode}): {done.stderr.strip()}")
    out = json.loads(done.stdout)
    return {"wall_seconds": wall, "own_wall_seconds": out["wall_seconds"], "cpu_seconds": cpu,
            "messages": out["messages"], "simulated_seconds": out["simulated_seconds"],
            "peak_rss_kib": out["peak_rss_kib"]}


def children_cpu_seconds() -> float:
    """CPU time of the reaped children: hopsim's forked engine, the bare program.

    Less sensitive than wall time to other jobs sharing the cores, so it is reported too.
    """
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def best(runs: list[dict]) -> dict:
    fastest = min(runs, key=lambda r: r["wall_seconds"])
    return dict(fastest, messages_per_second=fastest["messages"] / fastest["wall_seconds"],
                all_wall_seconds=[round(r["wall_seconds"], 3) for r in runs],
                min_cpu_seconds=min(r["cpu_seconds"] for r in runs))


def measure(case: Case, bare: Path, args) -> dict:
    hop_runs, bare_runs = [], []
    for k in range(args.repeats):
        # Alternate which goes first, so neither always runs on a machine the other warmed.
        order = ("hopsim", "bare") if k % 2 == 0 else ("bare", "hopsim")
        for who in order:
            if who == "hopsim":
                hop_runs.append(run_hopsim(case, args))
            else:
                bare_runs.append(run_bare(bare, case, args))
    h, b = best(hop_runs), best(bare_runs)
    if case.overlay:
        h["overlay_build_seconds"] = overlay_build_seconds(case, args)
    row = {"case": case.label, "ranks": case.ranks, "overlay": case.overlay or None,
           "degree": case.degree or None, "round_trips_per_rank": case.exchanges,
           "request_bytes": args.bytes, "reply_bytes": case.reply_bytes,
           "hopsim": h, "bare": b, "ratio": h["messages_per_second"] / b["messages_per_second"],
           "cpu_ratio": (b["min_cpu_seconds"] / b["messages"]) / (h["min_cpu_seconds"] / h["messages"]),
           "bare_command": shlex.join(bare_command(bare, case, args))}
    if not case.overlay:
        row["simulated_time_difference"] = \
            abs(h["simulated_seconds"] - b["simulated_seconds"]) / b["simulated_seconds"]
    return row


def own_rss_kib() -> int:
    """This Python process's resident memory: hopsim's forked engine starts with it."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def mib(kib: int) -> str:
    return f"{kib / 1024:.0f}"


def print_row_header():
    print(f"{'case':<22} {'ranks':>6} {'hopsim msgs':>11} {'hopsim s':>8} {'hopsim msg/s':>12} "
          f"{'bare msgs':>9} {'bare s':>7} {'bare msg/s':>10} {'ratio':>6} {'cpu ratio':>9} "
          f"{'hopsim MiB':>10} {'bare MiB':>8} {'sim diff':>8}", flush=True)


def print_row(r: dict):
    h, b = r["hopsim"], r["bare"]
    diff = r.get("simulated_time_difference")
    diff = "-" if diff is None else f"{diff:.0e}" if diff else "0"
    print(f"{r['case']:<22} {r['ranks']:>6} {h['messages']:>11} {h['wall_seconds']:>8.2f} "
          f"{h['messages_per_second']:>12,.0f} {b['messages']:>9} {b['wall_seconds']:>7.2f} "
          f"{b['messages_per_second']:>10,.0f} {r['ratio']:>6.2f} {r['cpu_ratio']:>9.2f} "
          f"{mib(h['peak_rss_kib']):>10} "
          f"{mib(b['peak_rss_kib']):>8} {diff:>8}", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--routed", action="store_true",
                    help="add Kautz K(63,2), de Bruijn B(4,6) and random overlays at ~4096 ranks")
    ap.add_argument("--huge", action="store_true",
                    help="add any-to-any and de Bruijn B(4,8) at 65536 ranks")
    ap.add_argument("--sizes", default="1024,4096,16384",
                    help="rank counts of the any-to-any rows (default: %(default)s)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="runs of each program per row, alternating; the fastest is kept "
                         "(default: %(default)s)")
    ap.add_argument("--bytes", type=int, default=4000, help="request size, and reply size of "
                    "the any-to-any rows (default: %(default)s)")
    ap.add_argument("--latency-us", type=float, default=100.0, help="one-way latency "
                    "(default: %(default)s, a 10 GbE cluster)")
    ap.add_argument("--bandwidth-gbps", type=float, default=10.0, help="per-NIC bandwidth "
                    "(default: %(default)s)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bare", help="path of the bare_s4u program (default: the installed one)")
    ap.add_argument("--json", metavar="FILE", help="also write the table as JSON to FILE")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        ap.error(f"--sizes must be comma-separated integers, got {args.sizes!r}")

    cases = [Case("any-to-any", n, args.bytes) for n in sizes]
    if args.routed:
        cases += [Case("kautz K(63,2)", 4032, 0, "kautz", 63),
                  Case("debruijn B(4,6)", 4096, 0, "debruijn", 4),
                  Case("random", 4096, 0, "random", 0)]
    if args.huge:
        cases += [Case("any-to-any", 65536, args.bytes),
                  Case("debruijn B(4,8)", 65536, 0, "debruijn", 4)]

    bare = find_bare(args.bare)
    command = shlex.join([sys.executable, *(sys.argv if argv is None else [__file__, *argv])])
    load_start = os.getloadavg()
    print(f"star of single-rank nodes, {args.latency_us:g} us, {args.bandwidth_gbps:g} Gb/s, "
          f"zero host costs, any-source; best of {args.repeats} alternating runs; "
          f"load average {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}", flush=True)
    print_row_header()
    rows = []
    for case in cases:
        row = measure(case, bare, args)
        rows.append(row)
        print_row(row)
    for row in rows:
        build = row["hopsim"].get("overlay_build_seconds")
        if build is not None and build >= 0.05 * row["hopsim"]["wall_seconds"]:
            print(f"{row['case']} at {row['ranks']}: {build:.2f} s of hopsim's "
                  f"{row['hopsim']['wall_seconds']:.2f} s is building the overlay's routing tables")
    load_end = os.getloadavg()
    print(f"load average at the end {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}")
    if args.json:
        doc = {"command": command, "bare_program": str(bare),
               "platform": {"topology": "star", "ranks_per_node": 1, "latency_us": args.latency_us,
                            "bandwidth_gbps": args.bandwidth_gbps, "host_costs": 0,
                            "reception": "any-source"},
               "repeats": args.repeats, "python_rss_kib": own_rss_kib(), "loadavg_start": load_start, "loadavg_end": load_end,
               "rows": rows}
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
