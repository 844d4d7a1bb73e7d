"""IMB Alltoall and Allreduce on the emulated rigs, predicted from each rig's 2-host files
(issue 19; docs/validation.md, "Collectives, live").

    python -m hopsim.calibration.collectives_live --rigs DIR --out OUT [--rig A ...]

DIR holds a folder per rig with the files of calibration/rigs.py's CASES (the campaign's
output). Per rig: `hopsim calibrate` on every 2-host file, as the rigs baseline does
(rigs_report.py); the reduction's per-byte cost estimated from the 2-host Allreduce
against the 2-host Alltoall (below); `hopsim validate` of the 4x1 and 4x2 (block) Alltoall
and Allreduce files. Writes OUT/<rig>/fit.toml and OUT/collectives-live.json, prints the
tables of docs/validation.md. Nothing is written into DIR.

The reduction's cost: on 2 ranks Open MPI's Allreduce (ring or Rabenseifner from 64 KiB)
and its Alltoall (one exchange) move the same bytes, and only the Allreduce combines
(half the vector per rank). Measured minus simulated, Allreduce minus Alltoall, over the
simulated effect of 1 ns/B (same sizes, noise off) gives ns/B per size and trial; it is
used only if every estimate from 64 KiB is positive and their spread is under their
median (otherwise the data do not tell it apart from the trial-to-trial noise).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import hopsim
from hopsim import _engine

from ..errors import InputError
from ..platforms.parse import load_file
from .parsers import parse_file
from .rigs_report import SHM_FILE, _hopsim, _run, _show, files_of

LARGE = 65536
COLLECTIVES = ("alltoall", "allreduce")


def _t_avg(path: Path) -> dict[int, float]:
    return {m.size: m.value for m in parse_file(path) if m.statistic == "t_avg_us" and m.rank is None}


def reduce_cost(fit: Path, rig_dir: Path, trials: int) -> dict:
    """ns/B of the reduction from the 2-host Allreduce and Alltoall (module docstring)."""
    pairs = [(rig_dir / f"imb-allreduce-2x1-block-t{t}.txt", rig_dir / f"imb-alltoall-2x1-block-t{t}.txt")
             for t in range(1, trials + 1)]
    pairs = [(a, b) for a, b in pairs if a.is_file() and b.is_file()]
    if not pairs:
        return {"used": False, "why": "no 2-host Allreduce and Alltoall files"}
    plat = load_file(fit).replace(noise_scope="off", noise_median_us=0.0, noise_sigma=0.0, noise_values_us=())
    sizes = sorted(s for s in _t_avg(pairs[0][0]) if s >= LARGE)
    sim = {}
    for c in (0.0, 1.0):
        p = plat.replace(reduce_ns_per_byte=c)
        for kind in COLLECTIVES:
            rows = hopsim.simulate(p, kind, ranks=2, sizes=sizes).results["rows"]
            sim[kind, c] = {r["bytes"]: r["t_avg_us"] for r in rows}
    per_size = {}
    for s in sizes:
        effect = sim["allreduce", 1.0][s] - sim["allreduce", 0.0][s]  # us per ns/B
        model = sim["allreduce", 0.0][s] - sim["alltoall", 0.0][s]
        per_size[s] = [round(((_t_avg(a)[s] - _t_avg(b)[s]) - model) / effect, 4) for a, b in pairs]
    values = [v for vs in per_size.values() for v in vs]
    med = statistics.median(values)
    spread = max(values) - min(values)
    used = min(values) > 0 and spread < med
    why = ("consistent: every estimate positive, spread under the median" if used else
           f"not identifiable: estimates {min(values):+.3g} to {max(values):+.3g} ns/B around "
           f"{med:+.3g} (trial-to-trial noise larger than the effect)")
    return {"used": used, "ns_per_byte": round(med, 4) if used else 0.0, "median_estimate": round(med, 4),
            "per_size_and_trial": {str(s): v for s, v in per_size.items()}, "why": why,
            "files": [f.name for pair in pairs for f in pair]}


def _with(fit: Path, key: str, value: float, name: str) -> Path:
    """fit with [host] key set to value, as OUT/<rig>/<name>."""
    lines = fit.read_text().split("\n")
    at = [i for i, line in enumerate(lines) if line.startswith(f"{key} = ")]
    if len(at) != 1:
        raise InputError(f"{fit}: expected one '{key} = ' line to set")
    lines[at[0]] = f"{key} = {value}"
    out = fit.with_name(name)
    out.write_text("\n".join(lines))
    return out


def rig_result(rig_dir: Path, out: Path, base: Path, trials: int) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    commands = []
    fit_files = [p for _, p in files_of(rig_dir, 2, trials)]
    if not fit_files:
        raise InputError(f"{rig_dir}: no 2-host files to calibrate on")
    fit = out / "fit.toml"
    cmd = _hopsim("calibrate", *fit_files, "--base", base, "--nodes", 4, "--out", fit)
    joint_failed = None
    try:
        _run(cmd)
    except InputError as e:  # kept in the summary; the closed-form fitters alone then
        joint_failed = str(e).rsplit("failed: ", 1)[-1]
        cmd = _hopsim("calibrate", *fit_files, "--base", base, "--nodes", 4, "--closed-form", "--out", fit)
        _run(cmd)
    commands.append(_show(cmd))
    # calibrate's report (every residual, in comments) is its stdout again on a rerun: the
    # file keeps its first line, the command.
    lines = fit.read_text().split("\n")
    fit.write_text("\n".join(lines[:1] + [line for line in lines[1:] if not line.startswith("#")]))
    cost = reduce_cost(fit, rig_dir, trials)
    platform = _with(fit, "reduce_ns_per_byte", cost["ns_per_byte"], "fit-reduce.toml") if cost["used"] else fit
    # IMB's ranks block in MPI calls: the pass cost fitted to latency_checker's polling loop
    # (host.pass_us) is charged to every step of a collective; the same fit without it shows
    # how much of the error that is.
    no_pass = _with(platform, "pass_us", 0.0, "fit-no-pass.toml")
    files = []
    for per_host in (1, 2):
        group = [(c, f) for c, f in files_of(rig_dir, 4, trials)
                 if c.per_host == per_host and c.tool in ("imb-alltoall", "imb-allreduce")]
        if not group:
            continue
        reports = []
        for p in (platform, no_pass):
            cmd = _hopsim("validate", "--platform", p, "--nodes", 4, "--ranks-per-node", per_host,
                          *[f for _, f in group], "--json")
            reports.append(json.loads(_run(cmd).stdout))
            commands.append(_show(cmd))
        for case, f in group:
            # 0 B is left out: Open MPI returns at once, hopsim's 0 is by design.
            mine, bare = ([c for c in r["cases"] if Path(c["file"]).name == f.name and c["bytes"] > 0]
                          for r in reports)
            errs = [abs(c["error_pct"]) for c in mine]
            errs_bare = [abs(c["error_pct"]) for c in bare]
            files.append({"file": f.name, "collective": case.tool[4:], "layout": f"4x{per_host}",
                          "median_abs_error_pct": round(statistics.median(errs), 1) if errs else None,
                          "max_abs_error_pct": round(max(errs), 1) if errs else None,
                          "median_abs_error_pct_no_pass": round(statistics.median(errs_bare), 1) if errs else None,
                          "max_abs_error_pct_no_pass": round(max(errs_bare), 1) if errs else None,
                          "per_size": [{"bytes": c["bytes"], "measured_us": c["measured_us"],
                                        "simulated_us": round(c["simulated_us"], 1),
                                        "error_pct": round(c["error_pct"], 1),
                                        "simulated_us_no_pass": round(b["simulated_us"], 1),
                                        "error_pct_no_pass": round(b["error_pct"], 1)}
                                       for c, b in zip(mine, bare)]})
    return {"commands": commands, "fitted_on": [f.name for f in fit_files], "joint_fit_failed": joint_failed,
            "reduce_cost": cost, "files": files}


def per_size_table(rig: str, result: dict) -> list[str]:
    """Per collective and layout: per size, the median over trials of measured, simulated
    and signed error, and Open MPI's algorithm (hopsim's choice)."""
    lines = []
    groups = {}
    for f in result["files"]:
        groups.setdefault((f["collective"], f["layout"]), []).append(f)
    for (kind, layout), fs in sorted(groups.items()):
        ranks = 4 * int(layout[-1])
        lines += ["", f"{rig}, {kind} {layout} ({len(fs)} trials): per size, median over trials", "",
                  "| bytes | algorithm | measured us | hopsim us | error % (trials) | without pass cost: us, error % |",
                  "|---|---|---|---|---|---|"]
        sizes = sorted({c["bytes"] for f in fs for c in f["per_size"]})
        for s in sizes:
            rows = [c for f in fs for c in f["per_size"] if c["bytes"] == s]
            errs = ", ".join(f"{c['error_pct']:+.0f}" for c in rows)
            lines.append(f"| {s} | {_engine.collectives.decision(kind, ranks, s)} | "
                         f"{statistics.median(c['measured_us'] for c in rows):.1f} | "
                         f"{statistics.median(c['simulated_us'] for c in rows):.1f} | "
                         f"{statistics.median(c['error_pct'] for c in rows):+.1f} ({errs}) | "
                         f"{statistics.median(c['simulated_us_no_pass'] for c in rows):.1f}, "
                         f"{statistics.median(c['error_pct_no_pass'] for c in rows):+.1f} |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hopsim.calibration.collectives_live",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--rigs", required=True, type=Path, help="the campaign's folder (one folder per rig)")
    ap.add_argument("--out", required=True, type=Path, help="where the fits and the summary go")
    ap.add_argument("--rig", action="append", help="only this rig (repeatable; default: every folder)")
    ap.add_argument("--trials", type=int, default=3)
    args = ap.parse_args(argv)
    try:
        rigs = args.rig or sorted(p.name for p in args.rigs.iterdir() if p.is_dir())
        args.out.mkdir(parents=True, exist_ok=True)
        base = args.out / "base-shm.toml"
        cmd = _hopsim("calibrate", SHM_FILE, "--ranks-per-node", 2, "--base", "two-nodes", "--nodes", 4,
                      "--out", base)
        if not SHM_FILE.is_file():
            raise InputError(f"{SHM_FILE} not found: run from hopsim's source folder")
        _run(cmd)
        summary = {"base": _show(cmd), "rigs": {}}
        for rig in rigs:
            summary["rigs"][rig] = rig_result(args.rigs / rig, args.out / rig, base, args.trials)
    except (InputError, OSError) as e:
        print(f"hopsim: error: {e}", file=sys.stderr)
        return 2
    (args.out / "collectives-live.json").write_text(json.dumps(summary, separators=(",", ":")) + "\n")
    lines = ["# IMB Alltoall and Allreduce on the rigs, predicted from 2-host files", "",
             "Written by `python -m hopsim.calibration.collectives_live` (docs/validation.md, "
             "\"Collectives, live\"); errors leave 0 B out. Commands:", "", f"    {summary['base']}"]
    for rig, r in summary["rigs"].items():
        lines += [f"    {c}" for c in r["commands"]]
    lines += ["", "| rig | file | median abs error % | worst abs error % | without pass cost: median, worst |",
              "|---|---|---|---|---|"]
    for rig, r in summary["rigs"].items():
        for f in r["files"]:
            lines.append(f"| {rig} | {f['file']} | {f['median_abs_error_pct']} | {f['max_abs_error_pct']} | "
                         f"{f['median_abs_error_pct_no_pass']}, {f['max_abs_error_pct_no_pass']} |")
    for rig, r in summary["rigs"].items():
        c = r["reduce_cost"]
        if r["joint_fit_failed"]:
            lines += ["", f"{rig}: the joint fit failed ({r['joint_fit_failed']}): the closed-form fit is used."]
        lines += ["", f"{rig}: reduce_ns_per_byte {c.get('ns_per_byte')} ({c['why']})."]
        lines += per_size_table(rig, r)
    text = "\n".join(lines) + "\n"
    (args.out / "README.md").write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
