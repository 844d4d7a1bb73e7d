"""A 2-host campaign's refit (campaign-R/fit.toml: `hopsim calibrate` on the committed
campaign-R/camp-live/*/result.json) against rig R's 4-host files, counted as the rigs
report counts them: campaign-R/fit-results.json, one line per rig.

    python docs/validation/rigs-idle/machine-turn/campaign_results.py --rigs D,G,I,J
"""
import argparse
import json
import statistics
import sys

from evaluate import HERE, per_file


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rigs", required=True)
    args = ap.parse_args()
    for rig in args.rigs.split(","):
        folder = HERE / f"campaign-{rig}"
        files = per_file(folder / "fit.toml", rig)
        row = {"files": files, "median": round(statistics.median(files.values()), 1),
               "worst": max(files.values())}
        (folder / "fit-results.json").write_text(json.dumps({rig: row}, indent=1) + "\n")
        print(f"{rig}: {row['median']}% ({row['worst']}%)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
