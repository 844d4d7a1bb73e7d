"""Speed-up of `hopsim validate --jobs J` over `--jobs 1`: the replays that the joint fit
repeats at every step of `hopsim calibrate`.

    .venv/bin/python bench/replay_speedup.py [--jobs 1,2] [--rig D] [--json FILE]

The files are one rig's 4-host runs in docs/validation/rigs-idle/RIG/ (IMB Exchange at 4
hosts of 1 and 2 ranks, block and cyclic, and latency_checker beside them: several
ranks per node, as users run), replayed on that rig's fit, each placement one `hopsim
validate` command, as the rigs report runs them. Each --jobs value runs the same
commands, timed from start to exit, with the CPU seconds it and the engine's children
used (CPU / wall: the cores it actually had); the JSON outputs must be byte-identical.
The load average is printed before and after: on a shared machine other jobs take cores
too, and the speed-up reads against that.

This is a benchmark: it measures and reports, it asserts nothing but identical results.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = [(1, "block", "4x1-block"), (2, "block", "4x2-block"), (2, "cyclic", "4x2-node")]


def commands(rig: str) -> list[list[str]]:
    d = ROOT / "docs" / "validation" / "rigs-idle" / rig
    out = []
    for per_node, placement, tag in RUNS:
        files = sorted(str(p) for p in d.glob(f"*-{tag}-t*.txt"))
        out.append(["--platform", str(d / "baseline-fit.toml"), "--nodes", "4", "--ranks-per-node",
                    str(per_node), "--placement", placement, *files, "--json"])
    return out


def run(rig: str, jobs: int) -> tuple[float, float, list[str]]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    outputs = [subprocess.run([sys.executable, "-m", "hopsim", "validate", *args, "--jobs", str(jobs)],
                              check=True, capture_output=True, text=True).stdout
               for args in commands(rig)]
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, outputs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", default="1,2", help="comma-separated --jobs values (default 1,2)")
    ap.add_argument("--rig", default="D", help="a rig of docs/validation/rigs-idle (default D)")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = ap.parse_args(argv)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"cores usable: {len(os.sched_getaffinity(0))}")
    rows, first = [], None
    for j in (int(x) for x in args.jobs.split(",")):
        wall, cpu, outputs = run(args.rig, j)
        if first is None:
            first = (wall, outputs)
        elif outputs != first[1]:
            print(f"--jobs {j}: results differ from the first run's", file=sys.stderr)
            return 1
        rows.append({"jobs": j, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                     "cpu_per_wall": round(cpu / wall, 2), "speedup": round(first[0] / wall, 2)})
        print(f"--jobs {j}: {wall:.1f} s wall, {cpu:.1f} s CPU ({cpu / wall:.2f} cores), "
              f"{first[0] / wall:.2f}x")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
