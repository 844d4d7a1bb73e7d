"""Each rig refitted by `hopsim calibrate --machine-cores 2` on its main fit's files plus
its 2-host runs at 2 ranks per host (measure.py: latency_checker at 0 B and 4000 B), then
its 4-host files predicted and counted as the rigs report counts them.

    python docs/validation/rigs-idle/machine-turn/calibrate_turn.py --rigs H,D

The main fit's command is the first line of the rig's baseline-fit.toml; this adds the six
2x2 files (FILE@2) and --machine-cores 2, and writes machine-turn/R/calibrated.toml (its
report in calibrated.txt). Results go to machine-turn/calibrated.json.
"""
import argparse
import json
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

from evaluate import HERE, RIGS, per_file

ROOT = RIGS.parents[2]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rigs", required=True)
    args = ap.parse_args()
    path = HERE / "calibrated.json"
    results = json.loads(path.read_text()) if path.is_file() else {}
    for rig in args.rigs.split(","):
        first = (RIGS / rig / "baseline-fit.toml").read_text().splitlines()[0]
        argv = shlex.split(first.removeprefix("# Written by: hopsim "))
        out = HERE / rig / "calibrated.toml"
        argv[argv.index("--out") + 1] = str(out.relative_to(ROOT))
        extra = [str((HERE / rig / f"latency_checker-{k}2x2-block-t{t}.txt").relative_to(ROOT)) + "@2"
                 for k in ("0B-", "") for t in (1, 2, 3)]
        argv[1:1] = extra      # files before the options: argparse takes them there only
        argv += ["--machine-cores", "2"]
        cmd = [sys.executable, "-m", "hopsim", *argv]
        run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if run.returncode:
            sys.stderr.write(run.stderr)
            return run.returncode
        (HERE / rig / "calibrated.txt").write_text(run.stdout)
        files = per_file(out, rig)
        turn = next(l for l in out.read_text().splitlines() if l.startswith("turn_us"))
        row = {"command": shlex.join(["hopsim", *argv]),
               "turn": turn, "files": files,
               "median": round(statistics.median(files.values()), 1), "worst": max(files.values())}
        results[rig] = row
        print(f"{rig}: {turn}; 4-host counted {row['median']} ({row['worst']})", flush=True)
        path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
