"""A rig's fit moved to where the exchange's loss is a capacity on rendezvous messages
instead of a slower bucket and Open MPI's rendezvous race: the bucket back at the closed
form's rate (the one-way rate the ping-pong shows, from the fit's header), no race, and a
capacity that serves rendezvous messages only, per node (network.limiter_scope, the form
calibrate writes when 2 hosts cannot tell) or machine-wide (network.backbone_scope); its
rate and the bucket's fitted to the rig's 2-host files by the joint fit, everything else
held at the rig's fit. Then the rig's 4-host files predicted and counted as the rigs
report counts them. Run from the repository root.

    python docs/validation/rigs-idle/machine-segmentation/evaluate.py --rigs S,J,P
    python docs/validation/rigs-idle/machine-segmentation/evaluate.py --rigs S --fixed 1.5,1.6,1.8

--fixed: instead, the machine-wide form at these rates (Gbit/s), the bucket at the closed
form's, nothing fitted: what the 4-host files would need.

BICs are the fit term only: each form has as many parameters as the rig's fit where the
rig's fit has the race (its jitter, a discrete choice, against the capacity's rate).
"""
import argparse
import json
import re
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RIGS = HERE.parent
sys.path.insert(0, str(RIGS / "machine-turn"))
import evaluate as turn_eval  # noqa: E402  (per_file: the 4-host files as the report counts them)

from hopsim.calibration import file_placement  # noqa: E402
from hopsim.calibration import structure as st  # noqa: E402
from hopsim.calibration.joint import bic_of, fit_joint  # noqa: E402
from hopsim.calibration.validate import cases_of  # noqa: E402
from hopsim.platforms import load  # noqa: E402
from hopsim.platforms.platform_file import platform_toml  # noqa: E402


def four_hosts(p, rig: str) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "p.toml"
        path.write_text(platform_toml(p, []))
        files = turn_eval.per_file(path, rig)
    return round(statistics.median(files.values()), 1), max(files.values())


def closed_form_bucket(rig: str) -> float:
    text = (RIGS / rig / "baseline-fit.toml").read_text()
    return float(re.search(r"^#   network\.bucket_gbps = ([0-9.e+-]+)    \(fit:", text, re.M).group(1))


def rig_cases(rig: str):
    commands = json.loads((RIGS / rig / "baseline.json").read_text())["commands"]
    cmd = shlex.split(next(c for c in commands if c.startswith(f"hopsim calibrate docs/validation/rigs-idle/{rig}/")))
    files = [a for a in cmd[2:cmd.index("--base")] if a.endswith(".txt")]
    measurements, rpn = file_placement.read(files, None, None)
    return cases_of(measurements, rpn)[0]


def line(label: str, j, p, rig: str) -> str:
    return (f"  {label}: BIC {bic_of(j.residuals, 0):.1f}, median |error| {j.median_abs_error_pct():.1f}% "
            f"on the 2-host files; 4-host files {four_hosts(p, rig)}")


def fixed(rig: str, rates: list[float]):
    cases = rig_cases(rig)
    moved = load(str(RIGS / rig / "baseline-fit.toml")).replace(
        bucket_gbps=closed_form_bucket(rig), rate_jitter=0.0, limiter_gbps=0.0)
    for gbps in rates:
        p = moved.replace(backbone_gbps=gbps, backbone_scope="rendezvous")
        print(line(f"{rig} machine-wide, rendezvous only, at {gbps} Gbit/s, bucket {p.bucket_gbps:.4g}",
                   fit_joint(p, cases, []), p, rig), flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rigs", required=True)
    ap.add_argument("--fixed", help="machine-wide rates to try, Gbit/s, comma-separated")
    args = ap.parse_args()
    for rig in args.rigs.split(","):
        if args.fixed:
            fixed(rig, [float(x) for x in args.fixed.split(",")])
            continue
        cases = rig_cases(rig)
        fit = load(str(RIGS / rig / "baseline-fit.toml"))
        own = fit_joint(fit, cases, [])
        print(f"{rig} ({len(cases)} cases; fit: bucket {fit.bucket_gbps:.4g} Gbit/s, race jitter "
              f"{fit.rate_jitter:g}, limiter {fit.limiter_gbps:g} {fit.limiter_scope})", flush=True)
        print(line("its fit", own, fit, rig), flush=True)
        moved = fit.replace(bucket_gbps=closed_form_bucket(rig), rate_jitter=0.0, limiter_gbps=0.0,
                            backbone_gbps=0.0, backbone_scope=None, limiter_scope="all")
        loaded = st._both_ways(cases)
        fit_joint(moved, loaded, [])
        d0, _ = st._capacity_start(moved, loaded)
        forms = {"per-node, rendezvous only": (moved.replace(limiter_gbps=d0, limiter_scope="rendezvous"),
                                               "limiter_gbps"),
                 "machine-wide, rendezvous only": (moved.replace(backbone_gbps=d0, backbone_scope="rendezvous"),
                                                   "backbone_gbps")}
        for label, (start, rate) in forms.items():
            j = fit_joint(start, cases, ["bucket_gbps", rate])
            p = j.platform
            print(line(f"{label}: bucket {p.bucket_gbps:.4g}, capacity {getattr(p, rate):.4g} Gbit/s "
                       f"(started at {d0:.4g})", j, p, rig), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
