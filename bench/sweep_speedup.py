"""Speed-up of `hopsim run --jobs 2` over `--jobs 1` on a 200-point sweep.

    .venv/bin/python bench/sweep_speedup.py [--jobs 1,2] [--seeds 20] [--json FILE]

The sweep (written to a temporary folder, printed with --show) is the overlay degree
sweep at three sizes: de Bruijn overlays of degree 2, 4 and the largest that fits at 64,
256 and 1024 ranks, plus the complete graph at 64 ranks (10 cases), each with 20 seeds
(the random destinations), on the QDR InfiniBand preset scaled to 1024 nodes, round-robin
reception, 2 round trips per rank: 200 points of 0.05 s to about a second each.

Each --jobs value runs the same command into its own folder, timed from start to exit
(planning, the estimate's calibration probes, worker start-up and writing included), with
the CPU seconds it and its workers used (CPU / wall: the cores it actually had);
the CSVs must be byte-identical. It prints the load average before and after: on a
shared machine the other jobs take cores too, and the speed-up reads against that.

This is a benchmark: it measures and reports, it asserts nothing but identical results.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = [("complete", 0, 64)] + [("debruijn", d, n) for n, ds in
                                 ((64, (2, 4, 8)), (256, (2, 4, 16)), (1024, (2, 4, 32)))
                                 for d in ds]


def scenario(seeds: int) -> str:
    cases = ",\n".join(
        f'  {{overlay = "{o}", ranks = {n}}}' if o == "complete"
        else f'  {{overlay = "{o}", degree = {d}, ranks = {n}}}' for o, d, n in CASES)
    return (f'name = "degree_sizes"\ndescription = "de Bruijn degree at 64, 256 and 1024 ranks, '
            f'{seeds} seeds"\nplatform = "qdr-ib"\nworkload = "roundtrip"\n'
            f'reception = "round-robin"\nrequest_bytes = 4000\nreply_bytes = 0\nexchanges = 2\n'
            f"[platform_overrides]\nnodes = 1024\n[sweep]\ncase = [\n{cases},\n]\n"
            f"seed = {list(range(1, seeds + 1))}\n")


def run(folder: Path, jobs: int) -> tuple[float, float]:
    """Wall seconds, and CPU seconds of hopsim and everything it started (workers and
    the engine's forked children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "hopsim", "run", "sweep.toml", "--out", f"out{jobs}",
                    "--jobs", str(jobs)], cwd=folder, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", default="1,2")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--show", action="store_true", help="print the scenario and stop")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    text = scenario(args.seeds)
    if args.show:
        print(text, end="")
        return 0
    jobs = [int(j) for j in args.jobs.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="hopsim-sweep-bench-") as tmp:
        folder = Path(tmp)
        (folder / "sweep.toml").write_text(text)
        points = len(CASES) * args.seeds
        print(f"{points} points; load average at start: {os.getloadavg()[0]:.2f}", flush=True)
        for j in jobs:
            wall, cpu = run(folder, j)
            rows.append({"jobs": j, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                         "load_after": round(os.getloadavg()[0], 2)})
            # cpu / wall: the cores the sweep actually had (at most --jobs, less under load)
            print(f"--jobs {j}: {wall:.1f} s wall, {cpu:.1f} s CPU, {cpu / wall:.2f} cores busy "
                  f"(load average after {rows[-1]['load_after']:.2f})", flush=True)
        csvs = {(folder / f"out{j}" / "results.csv").read_bytes() for j in jobs}
        same = len(csvs) == 1
    base = rows[0]["wall_s"]
    for r in rows:
        r["speedup"] = round(base / r["wall_s"], 2)
        print(f"--jobs {r['jobs']}: speed-up {r['speedup']}x over --jobs {rows[0]['jobs']}")
    print(f"results.csv identical across --jobs: {same}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"points": points, "runs": rows, "identical": same}, f, indent=2)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
