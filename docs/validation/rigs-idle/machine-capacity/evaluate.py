"""Each rig's fits with this machine's capacity as their backbone (what `hopsim calibrate
--machine-gbps 2x1-t1/result.json,2x1-t2/result.json,2x1-t3/result.json` adds to a fit:
calibration/machine_capacity.py), against the rig's 4-host files, counted as the rigs
report counts them.

    python docs/validation/rigs-idle/machine-capacity/evaluate.py --rigs A,...,R

The fits: the rig's main fit (R/baseline-fit.toml) and, where it exists, its fit with the
machine's turn (machine-turn/R/calibrated-from-fit.toml, `--machine-cores 2`). Writes
machine-capacity/R/{fit,turn-fit}.toml and machine-capacity/results.json; prints one
line per rig, then the README's table.

    python docs/validation/rigs-idle/machine-capacity/evaluate.py --rigs S --gbps 1.437

--gbps X: X Gbit/s instead of the measured capacity (what `calibrate --machine-gbps X`
adds); writes machine-capacity/R/fit-X.toml and results-X.json instead.
"""
import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "machine-turn"))
import evaluate as turn_eval  # noqa: E402  (machine-turn/evaluate.py: per_file, RIGS)

from hopsim.calibration.machine_capacity import apply, parse  # noqa: E402
from hopsim.platforms import load  # noqa: E402
from hopsim.platforms.platform_file import platform_toml  # noqa: E402

RUNS = [HERE / f"2x1-t{t}" / "result.json" for t in (1, 2, 3)]


def summary(files: dict) -> tuple[float, float]:
    return round(statistics.median(files.values()), 1), max(files.values())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rigs", required=True)
    ap.add_argument("--gbps", help="a capacity in Gbit/s instead of the measured one")
    args = ap.parse_args()
    machine = parse(args.gbps or ",".join(str(p.relative_to(HERE.parents[3])) for p in RUNS))
    tag = f"-{args.gbps}" if args.gbps else ""
    results = {}
    for rig in args.rigs.split(","):
        here = HERE / rig
        here.mkdir(exist_ok=True)
        row = {}
        fits = {"main": turn_eval.RIGS / rig / "baseline-fit.toml",
                "turn": HERE.parent / "machine-turn" / rig / "calibrated-from-fit.toml"}
        for key, src in fits.items():
            if not src.is_file():
                continue
            with_it, line = apply(load(str(src)), machine)
            out = here / (("fit" if key == "main" else "turn-fit") + tag + ".toml")
            out.write_text(platform_toml(with_it, [
                f"{src.relative_to(HERE.parents[3])} with this machine's capacity as its "
                f"backbone (machine-capacity/evaluate.py):", line]))
            before, after = turn_eval.per_file(src, rig), turn_eval.per_file(out, rig)
            row[key] = {"before": before, "after": after,
                        "median_before": summary(before)[0], "worst_before": summary(before)[1],
                        "median_after": summary(after)[0], "worst_after": summary(after)[1]}
        results[rig] = row
        print(rig, "  ".join(f"{k}: {v['median_before']} ({v['worst_before']}) -> "
                             f"{v['median_after']} ({v['worst_after']})" for k, v in row.items()),
              flush=True)
    path = HERE / f"results{tag}.json"
    old = json.loads(path.read_text()) if path.is_file() else {}
    results = {**old, **results, "machine_gbps": machine.gbps}
    path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    print("\n| rig | main fit | with the machine's capacity | with --machine-cores 2 | and the capacity |")
    print("|---|---|---|---|---|")
    for rig in sorted(k for k in results if len(k) == 1):
        r = results[rig]
        cell = lambda k, when: (f"{r[k][f'median_{when}']}% ({r[k][f'worst_{when}']}%)"
                                if k in r else "-")
        print(f"| {rig} | {cell('main', 'before')} | {cell('main', 'after')} | "
              f"{cell('turn', 'before')} | {cell('turn', 'after')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
