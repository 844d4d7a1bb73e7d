"""IMB collectives on the idle rigs, predicted by each rig's kept 2-host fit, unchanged.

    python -m hopsim.calibration.rigs_collectives --out docs/validation/collectives-idle \\
        --tools DIR --rigs B,E,N --trials 3 [--no-measure] [--fits docs/validation/rigs-idle]

Issue 16 asks a rig's 2-host fit (calibrate on its 2-host IMB PingPong and Exchange,
osu_latency, osu_bw and latency_checker runs: rigs_report.baseline) for its 4-host Exchange
and latency_checker runs. This asks the same fit for traffic no point-to-point run shows:
IMB-MPI1's Alltoall, Allreduce, Allgather and Bcast with Open MPI choosing its own
algorithms (coll/tuned's fixed rules, which the engine follows message by message), on
the rig's 4 hosts at 1 and 2 ranks per host, both placements. Nothing is fitted here: each
file is predicted by `hopsim validate` on OUT/../rigs-idle/<rig>/baseline-fit.toml (--fits)
with the placement it ran.

Counted as the rigs report counts (latency_bound.py: a latency-bound case with more
busy-polling ranks than the machine's cores measures its scheduler), with one difference:
a collective's 0-byte row is Open MPI returning at once, not a latency, so it is left out
(hopsim's 0 is by design) and every case is set against the rig's 2-host ping-pong's n½.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
from pathlib import Path

from ..errors import InputError
from .latency_bound import counted_flags, rig_half_length
from .rigs import RIGS, Case, find_binaries, measure, rig_names, run_guarded
from .rigs_noise import noise_floor
from .rigs_report import _exact_median, _hopsim, _max, _rounded, _run, _show, code_digest, fit_code

COLLECTIVES = ("Alltoall", "Allreduce", "Allgather", "Bcast")
LAYOUTS = ((4, 1, "block"), (4, 2, "block"), (4, 2, "cyclic"))
CASES = tuple(Case(f"imb-{coll.lower()}", "imb", "IMB-MPI1", hosts, per_host, placement,
                   (coll, "-npmin", str(hosts * per_host), "-msglog", "0:20", "-iter", "200,10"))
              for coll in COLLECTIVES for hosts, per_host, placement in LAYOUTS)
LARGE = 65536
SIGNED_AT = (1024, 65536, 1048576)
MARKER = "<!-- generated below by python -m hopsim.calibration.rigs_collectives; edit above -->"


def files_of(rig_dir: Path, trials: int) -> list[tuple[Case, Path]]:
    return [(c, rig_dir / c.file(t)) for t in range(1, trials + 1) for c in CASES
            if (rig_dir / c.file(t)).is_file()]


def _inputs(paths: list[Path]) -> str:
    h = hashlib.sha256((code_digest() or "").encode())
    for p in paths:
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


VARIANTS = (("", "baseline-fit.toml"), ("_queue", "baseline-fit-queue.toml"))


def predict(rig: str, rig_dir: Path, fit_dir: Path, trials: int, cores: int) -> dict:
    """Every collective file of the rig against the fit's prediction, and against the same
    fit on the `queue` transport (the rigs report writes it beside the fit); kept in
    rig_dir/predicted.json until a file, a fit or the code changes."""
    fits = {suffix: fit_dir / name for suffix, name in VARIANTS}
    for fit in fits.values():
        if not fit.is_file():
            raise InputError(f"{fit}: no kept fit for rig {rig} (python -m hopsim.calibration.rigs --baseline)")
    files = files_of(rig_dir, trials)
    if not files:
        raise InputError(f"{rig_dir}: no collective files measured")
    pingpongs = sorted(fit_dir.glob("imb-pingpong-2x1-block-t*.txt"))
    made_from = _inputs([f for _, f in files] + list(fits.values()) + pingpongs)
    done = rig_dir / "predicted.json"
    if done.is_file():
        kept = json.loads(done.read_text())
        if kept.get("inputs_sha256") == made_from and kept.get("machine_cores") == cores:
            return kept
    n_half = rig_half_length(pingpongs)
    commands, rows = [], []
    for hosts, per_host, placement in LAYOUTS:
        group = [(c, f) for c, f in files if (c.hosts, c.per_host, c.placement) == (hosts, per_host, placement)]
        if not group:
            continue
        reports = {}
        for suffix, fit in fits.items():
            cmd = _hopsim("validate", "--platform", fit, "--nodes", hosts, "--ranks-per-node", per_host,
                          "--placement", placement, *[f for _, f in group], "--json")
            reports[suffix] = json.loads(_run(cmd).stdout)
            commands.append(_show(cmd))
        for case, f in group:
            row = {"file": f.name, "collective": case.tool[4:], "hosts": hosts, "per_host": per_host,
                   "placement": placement}
            for suffix, report in reports.items():
                mine = [c for c in report["cases"] if Path(c["file"]).name == f.name and c["bytes"] > 0]
                count = counted_flags(mine, cores, n_half)
                counted = [abs(c["error_pct"]) for c, n in zip(mine, count) if n]
                row[f"median_abs_error_pct_counted{suffix}"] = _exact_median(counted)
                if suffix:
                    continue
                at = {c["bytes"]: c["error_pct"] for c in mine}
                row.update({"cases": len(mine), "counted": sum(count),
                            "median_abs_error_pct_from_64KiB": _exact_median(
                                [abs(c["error_pct"]) for c in mine if c["bytes"] >= LARGE]),
                            "median_abs_error_pct": _exact_median([abs(c["error_pct"]) for c in mine]),
                            "max_abs_error_pct_counted": _max(counted),
                            "signed_error_pct_at": {str(s): round(at[s], 1) for s in SIGNED_AT if s in at},
                            "per_case": [{**{k: c[k] for k in ("workload", "ranks", "bytes", "measured_us",
                                                               "simulated_us", "error_pct")}, "counted": n}
                                         for c, n in zip(mine, count)]})
            rows.append(row)
    floors = noise_floor([{**r, "per_case": [c for c in r["per_case"] if c["counted"]]} for r in rows])
    for r in rows:
        r["noise_floor_counted_pct"] = floors[r["file"]]
    stamp = fit_dir / "baseline-fit.sha256"
    result = {"rig": rig, "fit": str(fits[""]), "fit_code": fit_code(stamp), "code": code_digest(),
              "machine_cores": cores, "half_length_bytes": None if n_half is None else round(n_half),
              "commands": commands, "files": rows, "inputs_sha256": made_from}
    done.write_text(json.dumps(result, indent=1) + "\n")
    return result


def against_t_max(rig_dir: Path, row: dict) -> float | None:
    """The file's median |error| over its counted cases with the simulated t_avg set
    against the measured t_max (IMB's slowest rank). The engine's ranks leave IMB's
    barrier together and all take the repetition's whole time (its t_min, t_max and
    t_avg agree); live, the ranks' times spread, and the slowest one's is the cycle the
    network sets. Where this column is small and the t_avg one large, the cycle is right
    and the spread is missing."""
    from .parsers import parse_file

    t_max = {m.size: m.value for m in parse_file(rig_dir / row["file"])
             if m.statistic == "t_max_us" and m.rank is None}
    errs = [abs(c["simulated_us"] / t_max[c["bytes"]] - 1) * 100 for c in row["per_case"]
            if c["counted"] and t_max.get(c["bytes"], 0) > 0]
    return _exact_median(errs)


def _pct(x) -> str:
    return "-" if x is None else f"{_rounded(x):.1f}"


def summary(result: dict, suffix: str = "") -> dict[str, tuple]:
    """{collective (or 'all'): (median over files, worst file)}, counted cases; suffix
    "_queue": on the queue transport."""
    out = {}
    key = f"median_abs_error_pct_counted{suffix}"
    for kind in [c.lower() for c in COLLECTIVES] + ["all"]:
        vals = [r[key] for r in result["files"]
                if kind in ("all", r["collective"]) and r.get(key) is not None]
        if vals:
            out[kind] = (statistics.median(vals), max(vals))
    return out


def rig_section(result: dict, why: str, rig_dir: Path) -> list[str]:
    from hopsim import _engine

    rig = result["rig"]
    today = result["fit_code"] == result["code"]
    lines = [f"## Rig {rig}: {why}", "",
             f"Fit: `{result['fit']}` (made by the code whose sources hash to "
             f"{(result['fit_code'] or 'unrecorded')[:12]}{', today' if today else ', not today'}'s); "
             f"n½ of its 2-host ping-pong {result['half_length_bytes']} B.", "",
             "| file | cases (counted) | median abs error %, counted | from 64 KiB | all | worst counted % "
             "| noise floor %, counted | error % at 1 KiB, 64 KiB, 1 MiB | `queue`, counted "
             "| against t_max, counted |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["files"]:
        signed = ", ".join(f"{r['signed_error_pct_at'][str(s)]:+.0f}" if str(s) in r["signed_error_pct_at"]
                           else "-" for s in SIGNED_AT)
        lines.append(f"| {r['file']} | {r['cases']} ({r['counted']}) | {_pct(r['median_abs_error_pct_counted'])} "
                     f"| {_pct(r['median_abs_error_pct_from_64KiB'])} | {_pct(r['median_abs_error_pct'])} "
                     f"| {_pct(r['max_abs_error_pct_counted'])} | {_pct(r['noise_floor_counted_pct'])} | {signed} "
                     f"| {_pct(r.get('median_abs_error_pct_counted_queue'))} "
                     f"| {_pct(against_t_max(rig_dir, r))} |")
    groups: dict[tuple, list] = {}
    for r in result["files"]:
        groups.setdefault((r["collective"], r["hosts"], r["per_host"], r["placement"]), []).append(r)
    lines += ["", "Per size, median over the trials (Open MPI's algorithm as the engine chooses it):", "",
              "| case | bytes | algorithm | measured us | hopsim us | error % (each trial) |", "|---|---|---|---|---|---|"]
    for (kind, hosts, per_host, placement), rs in groups.items():
        ranks = hosts * per_host
        for s in sorted({c["bytes"] for r in rs for c in r["per_case"]}):
            if s < 1024:
                continue
            cs = [c for r in rs for c in r["per_case"] if c["bytes"] == s]
            lines.append(f"| {kind} {hosts}x{per_host} {placement} | {s} | "
                         f"{_engine.collectives.decision(kind, ranks, s)} | "
                         f"{statistics.median(c['measured_us'] for c in cs):.1f} | "
                         f"{statistics.median(c['simulated_us'] for c in cs):.1f} | "
                         f"{statistics.median(c['error_pct'] for c in cs):+.1f} "
                         f"({', '.join(format(c['error_pct'], '+.0f') for c in cs)}) |")
    lines += ["", "Commands:", ""] + [f"    {c}" for c in result["commands"]] + [""]
    return lines


def write_report(out: Path, results: list[dict]) -> str:
    readme = out / "README.md"
    head = readme.read_text().split(MARKER)[0] if readme.is_file() else (
        "# IMB collectives on the idle rigs, predicted by each rig's 2-host fit\n\n")
    kinds = [c.lower() for c in COLLECTIVES]
    lines = [MARKER, "", "Counted cases; per rig and collective, the median over its files of each file's "
             "median absolute error (worst file):", "",
             "| rig | " + " | ".join(COLLECTIVES) + " | all files | all files, `queue` "
             "| all files, against t_max |", "|---" * (len(kinds) + 4) + "|"]
    for r in results:
        s, q = summary(r), summary(r, "_queue")
        cells = [f"{_pct(s[k][0])} ({_pct(s[k][1])})" if k in s else "-" for k in kinds + ["all"]]
        cells.append(f"{_pct(q['all'][0])} ({_pct(q['all'][1])})" if "all" in q else "-")
        vs_max = [v for v in (against_t_max(out / r["rig"], f) for f in r["files"]) if v is not None]
        cells.append(f"{_pct(statistics.median(vs_max))} ({_pct(max(vs_max))})" if vs_max else "-")
        lines.append(f"| {r['rig']} | " + " | ".join(cells) + " |")
    lines.append("")
    for r in results:
        lines += rig_section(r, RIGS[r["rig"]].why, out / r["rig"])
    text = head + "\n".join(lines)
    readme.write_text(text)
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hopsim.calibration.rigs_collectives",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, type=Path, metavar="DIR")
    ap.add_argument("--fits", type=Path, default=Path("docs/validation/rigs-idle"), metavar="DIR",
                    help="the rigs report's folder: DIR/<rig>/baseline-fit.toml and its 2-host ping-pongs")
    ap.add_argument("--tools", default=".", metavar="DIR", help="folder of IMB-MPI1 (default: here, then PATH)")
    ap.add_argument("--rigs", required=True, help="comma-separated rig names (calibration/rigs.py)")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=300, metavar="S", help="per run (default 300)")
    ap.add_argument("--no-measure", action="store_true", help="only predict and write OUT/README.md")
    ap.add_argument("--no-predict", action="store_true",
                    help="only measure (predicting loads the machine the next rig is measured on)")
    ap.add_argument("--cores", type=int, default=os.cpu_count(), metavar="N",
                    help="the measuring machine's cores (default: this machine's)")
    args = ap.parse_args(argv)

    def body() -> None:
        names = rig_names(args.rigs, args.trials)
        if not args.no_measure:
            binaries = find_binaries(Path(args.tools), CASES)
            for name in names:
                measure(RIGS[name], args.out / name, binaries, args.trials, args.timeout, cases=CASES)
        if not args.no_predict:
            results = [predict(n, args.out / n, args.fits / n, args.trials, args.cores) for n in names]
            write_report(args.out, results)

    return run_guarded("rigs_collectives", body)


if __name__ == "__main__":
    sys.exit(main())
