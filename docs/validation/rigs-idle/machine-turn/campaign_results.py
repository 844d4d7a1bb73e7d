"""A 2-host campaign's platform against rig R's 4-host files, counted as the rigs report
counts them, one line per rig: the refit (campaign-R/fit.toml, `hopsim calibrate` on the
committed runs) into campaign-R/fit-results.json, or with --live the live command's own
platform (campaign-R/measured-fit.toml) into campaign-R/results.json.

    python docs/validation/rigs-idle/machine-turn/campaign_results.py --rigs D,G,I,J
    python docs/validation/rigs-idle/machine-turn/campaign_results.py --rigs K,L --live
"""
import argparse
import json
import statistics
import sys

from evaluate import HERE, per_file


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rigs", required=True)
    ap.add_argument("--live", action="store_true",
                    help="the live command's platform (measured-fit.toml) instead of the refit")
    args = ap.parse_args()
    platform, written = ("measured-fit.toml", "results.json") if args.live else \
        ("fit.toml", "fit-results.json")
    for rig in args.rigs.split(","):
        folder = HERE / f"campaign-{rig}"
        files = per_file(folder / platform, rig)
        row = {"files": files, "median": round(statistics.median(files.values()), 1),
               "worst": max(files.values())}
        (folder / written).write_text(json.dumps({rig: row}, indent=1) + "\n")
        print(f"{rig}: {row['median']}% ({row['worst']}%)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
