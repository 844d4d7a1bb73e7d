"""An experiment, not hopsim's calibration: H's main fit (the command in ../baseline.json)
with the eager/rendezvous screen offered one threshold, 65535 B (Open MPI's TCP eager
limit, 65480 B of data, lies in the same interval of IMB's sizes), instead of every
interval between the exchange's sizes. Writes fit.toml and fit.txt here; run from the
repository root:

    python docs/validation/rigs-idle/H/threshold-65535/run.py
    for each placement: hopsim validate --platform docs/validation/rigs-idle/H/threshold-65535/fit.toml \\
        --nodes 4 --ranks-per-node K --placement P H/imb-exchange-4xK-*-t*.txt --json > validate-KxP.json
"""
import contextlib
import json
import os
import shlex
import sys
from pathlib import Path

from hopsim.calibration import structure
from hopsim.cli import main

here = Path(os.path.relpath(Path(__file__).parent))   # as the repository names it
structure.rendezvous_thresholds = lambda cases: [65535] if any(
    c.workload in structure.BOTH_WAYS and c.ranks > c.ranks_per_node for c in cases) else []
args = shlex.split(json.loads((here.parent / "baseline.json").read_text())["commands"][1])[1:]
args[args.index("--out") + 1] = str(here / "fit.toml")
with open(here / "fit.txt", "w") as report, contextlib.redirect_stdout(report):
    status = main(args)
fit = here / "fit.toml"
if status == 0:   # its provenance: this script, not hopsim calibrate as shipped
    lines = fit.read_text().split("\n", 1)
    fit.write_text(f"# Written by: {here / 'run.py'} (hopsim {shlex.join(args)}, "
                   "its rendezvous screen offered 65535 B only)\n" + lines[1])
sys.exit(status)
