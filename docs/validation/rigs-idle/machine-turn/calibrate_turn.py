"""Each rig refitted by `hopsim calibrate --machine-cores 2` on its main fit's files plus
its 2-host runs at 2 ranks per host (measure.py: latency_checker at 0 B and 4000 B), then
its 4-host files predicted and counted as the rigs report counts them.

    python docs/validation/rigs-idle/machine-turn/calibrate_turn.py --rigs H,J
    python docs/validation/rigs-idle/machine-turn/calibrate_turn.py --rigs A,B --from-fit

The main fit's command is the first line of the rig's baseline-fit.toml; this adds the six
2x2 files (FILE@2) and --machine-cores 2, and writes machine-turn/R/calibrated.toml (its
report in calibrated.txt; 12-17 minutes a rig). Those runs fit the turn only, so the
joint fit is the main fit's, value for value (checked on H and J): --from-fit takes
the rig's baseline-fit.toml as that joint fit and solves the turn on it as calibrate
does (calibrate._turn_on), in a minute, into R/calibrated-from-fit.toml. Results go to
machine-turn/calibrated.json.
"""
import argparse
import json
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

from evaluate import HERE, RIGS, per_file
from hopsim.calibration import file_placement
from hopsim.calibration.calibrate import _turn_on, _turned, checked_turn
from hopsim.calibration.validate import cases_of
from hopsim.platforms import load
from hopsim.platforms.platform_file import platform_toml

ROOT = RIGS.parents[2]


def from_fit(rig: str, extra: list[Path]) -> Path:
    """The rig's main fit as calibrate's joint fit, the turn solved on it as calibrate
    solves it."""
    fit = load(str(RIGS / rig / "baseline-fit.toml")).replace(machine_cores=2, turn_us=0.0)
    measurements, rpn = file_placement.read([str(p) for p in extra], None, None)
    # calibrate solves it before the noise is put back (the joint fit simulates without it).
    quiet = fit.replace(noise_scope="off", noise_median_us=0.0, noise_sigma=0.0,
                        noise_values_us=(), noise_distribution="lognormal")
    solved, line = _turn_on(quiet, measurements, rpn, len(extra))
    turned = fit.replace(turn_us=solved.turn_us, provenance=solved.provenance)
    # Then checked on the runs it was not fitted to, noise and all, as calibrate does.
    cases = [c for c in cases_of(measurements, rpn)[0] if _turned(turned, c)]
    turned, checks = checked_turn(turned, cases)
    out = HERE / rig / "calibrated-from-fit.toml"
    out.write_text(platform_toml(turned, [
        f"{rig}'s baseline-fit.toml (what `hopsim calibrate --machine-cores 2` fits on its files "
        f"and the 2x2 runs: the same network, value for value, on H and J), the turn solved on "
        f"it as calibrate does (calibrate_turn.py --from-fit):", line, *checks]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rigs", required=True)
    ap.add_argument("--from-fit", action="store_true")
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
        if args.from_fit:
            out = from_fit(rig, [ROOT / e for e in extra])
        else:
            run = subprocess.run([sys.executable, "-m", "hopsim", *argv], cwd=ROOT,
                                 capture_output=True, text=True)
            if run.returncode:
                sys.stderr.write(run.stderr)
                return run.returncode
            (HERE / rig / "calibrated.txt").write_text(run.stdout)
        files = per_file(out, rig)
        turn = next(l for l in out.read_text().splitlines() if l.startswith("turn_us"))
        row = {"command": shlex.join(["hopsim", *argv]), "from_fit": args.from_fit,
               "turn": turn, "files": files,
               "median": round(statistics.median(files.values()), 1), "worst": max(files.values())}
        results[rig + (" from-fit" if args.from_fit else "")] = row
        print(f"{rig}: {turn}; 4-host counted {row['median']} ({row['worst']})", flush=True)
        path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
