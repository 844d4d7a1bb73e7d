"""The baseline of the rigs campaign and its README: calibrate on each rig's 2-host files
with `hopsim calibrate`, validate its 4-host files with `hopsim validate`, one median
absolute error per file; and OUT/README.md listing every file with its command and load.

Called by `python -m hopsim.calibration.rigs --baseline` (calibration/rigs.py).
"""
from __future__ import annotations

import json
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

from ..errors import InputError
from .rigs import CASES, Rig

# The intra-node path of the 2-per-host cases is not seen by 2-host runs: as in the
# demonstration (calibration/demo.py), it comes from --base, the fit of the shared-memory
# osu_latency kept in tests/data.
SHM_FILE = Path("tests/data/osu/osu_latency-7.4-shm.txt")


def _hopsim(*args) -> list[str]:
    return [sys.executable, "-m", "hopsim", *map(str, args)]


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise InputError(f"{shlex.join(cmd[2:])} failed: {p.stderr.strip()[-300:]}")
    return p


def _show(cmd: list[str]) -> str:
    """The command as a user types it (hopsim on PATH)."""
    return "hopsim " + shlex.join(cmd[3:])


def files_of(out: Path, hosts: int, trials: int) -> list[tuple[object, Path]]:
    return [(c, out / c.file(t)) for t in range(1, trials + 1) for c in CASES
            if c.hosts == hosts and (out / c.file(t)).is_file()]


def baseline(root: Path, rig: Rig, trials: int) -> dict:
    """Fit on the rig's 2-host files, validate every file; per-file median |error|."""
    out = root / rig.name
    base = root / "base-shm.toml"
    commands = []
    if not base.is_file():
        if not SHM_FILE.is_file():
            raise InputError(f"{SHM_FILE} not found: run from hopsim's source folder")
        cmd = _hopsim("calibrate", SHM_FILE, "--ranks-per-node", 2, "--base", "two-nodes",
                      "--nodes", 4, "--out", base)
        _run(cmd)
    commands.append(_show(_hopsim("calibrate", SHM_FILE, "--ranks-per-node", 2, "--base",
                                  "two-nodes", "--nodes", 4, "--out", base)))
    fit_files = [p for _, p in files_of(out, 2, trials)]
    fit = out / "baseline-fit.toml"
    cmd = _hopsim("calibrate", *fit_files, "--base", base, "--nodes", 4, "--out", fit)
    p = _run(cmd)
    (out / "baseline-fit.txt").write_text(p.stdout)
    commands.append(_show(cmd))
    rows = []
    for hosts in (2, 4):
        for per_host in (1, 2):
            group = [(c, f) for c, f in files_of(out, hosts, trials) if c.per_host == per_host]
            if not group:
                continue
            cmd = _hopsim("validate", "--platform", fit, "--nodes", 4, "--ranks-per-node", per_host,
                          *[f for _, f in group], "--json")
            report = json.loads(_run(cmd).stdout)
            commands.append(_show(cmd))
            for case, f in group:
                errs = [abs(c["error_pct"]) for c in report["cases"] if Path(c["file"]).name == f.name]
                rows.append({"file": f.name, "hosts": hosts, "per_host": per_host,
                             "placement": case.placement, "fitted_on": hosts == 2,
                             "cases": len(errs),
                             "median_abs_error_pct": round(statistics.median(errs), 1) if errs else None,
                             "max_abs_error_pct": round(max(errs), 1) if errs else None})
    predicted = [r["median_abs_error_pct"] for r in rows if not r["fitted_on"]
                 and r["median_abs_error_pct"] is not None]
    result = {"rig": rig.name, "commands": commands, "files": rows,
              "median_over_predicted_files_pct": round(statistics.median(predicted), 1) if predicted else None}
    (out / "baseline.json").write_text(json.dumps(result, indent=1) + "\n")
    return result
