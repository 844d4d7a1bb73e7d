"""Running a scenario: check every point, run them, print one table, write JSON and CSV.

Outputs are deterministic: for the same scenario and seeds, results.csv is byte-identical
and results.json differs only in the wall_seconds values (the one measured quantity; it
is deliberately left out of the CSV).
"""
from __future__ import annotations

import csv
import io
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .. import platforms
from ..api import prepare, simulate
from ..errors import InputError
from ..result import Result
from .scenario import POINT_KEYS, Scenario

# Result columns per workload, in CSV order; the table prints the headline ones.
_ROUNDTRIP = ("rtt_mean_us", "rtt_p50_us", "rtt_p99_us", "rtt_min_us", "rtt_max_us",
              "per_rank_mean_average_us", "per_rank_mean_sd_us", "lc_average_of_averages_us",
              "ray_average_for_all_ranks_us", "ray_standard_deviation_us", "hops_mean",
              "relays_mean", "relays_sd", "relays_max")
_HEADLINE = ("overlay_built", "bytes", "latency_us", "bandwidth_mbytes_per_sec", "t_max_us",
             "mbytes_per_sec",
             "rtt_mean_us", "rtt_p99_us", "lc_average_of_averages_us",
             "ray_average_for_all_ranks_us", "hops_mean", "relays_mean", "messages")


@dataclass(frozen=True)
class Outcome:
    scenario: Scenario
    points: list[dict]
    results: list[Result]


def _label(scenario: Scenario, index: int, point: dict) -> str:
    # Linked sweep tables may set different keys (complete points have no degree).
    swept = ", ".join(f"{k}={point[k]}" for k in scenario.swept_keys() if k in point)
    return f"point {index + 1}" + (f" ({swept})" if swept else "")


def _call_args(scenario: Scenario, point: dict) -> dict:
    args = dict(point)
    args["platform"] = scenario.platform_ref(point["platform"])
    if "placement" in point:
        args["placement"] = scenario.placement_ref(point["placement"])
    if scenario.platform_overrides:
        base = platforms.load(args["platform"])
        try:
            args["platform"] = base.replace(**scenario.platform_overrides)
        except InputError as e:
            raise InputError(f"platform_overrides: {e}") from None
    return args


def check(scenario: Scenario) -> list[dict]:
    """The points, each validated (platform, placement, parameters) before any runs."""
    points = scenario.points()
    for i, point in enumerate(points):
        try:
            prepare(**_call_args(scenario, point))
        except InputError as e:
            raise InputError(f"{scenario.source}: {_label(scenario, i, point)}: {e}") from None
    return points


def run(scenario: Scenario, progress: bool = False) -> Outcome:
    """Run every point in order; progress (for a terminal) goes to stderr."""
    points = check(scenario)
    results = []
    try:
        for i, point in enumerate(points):
            if progress:
                sys.stderr.write(f"\r\033[K[{i + 1}/{len(points)}] {_label(scenario, i, point)}")
                sys.stderr.flush()
            try:
                results.append(simulate(**_call_args(scenario, point)))
            except InputError as e:
                raise InputError(f"{scenario.source}: {_label(scenario, i, point)}: {e}") from None
    finally:
        if progress:  # also on an error or an interrupt: its message starts a clean line
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
    return Outcome(scenario, points, results)


def flat_rows(result: Result) -> list[dict]:
    """The result as table rows: one per size (every workload but roundtrip) or one."""
    r = result.results
    common = {"messages": result.messages, "simulated_seconds": result.simulated_seconds}
    if "rows" in r:
        return [dict(row, **common) for row in r["rows"]]
    row = {"rtt_mean_us": r["rtt_us"]["mean"], "rtt_p50_us": r["rtt_us"]["p50"],
           "rtt_p99_us": r["rtt_us"]["p99"], "rtt_min_us": r["rtt_us"]["min"],
           "rtt_max_us": r["rtt_us"]["max"],
           "per_rank_mean_average_us": r["per_rank_mean_us"]["average"],
           "per_rank_mean_sd_us": r["per_rank_mean_us"]["sd"]}
    for key in ("lc_average_of_averages_us", "ray_average_for_all_ranks_us",
                "ray_standard_deviation_us"):
        row[key] = r[key]
    if "overlay" in r:  # the overlay actually built, e.g. "B(2,10)" (docs/overlays.md)
        row["overlay_built"] = _built(r["overlay"])
    if "hops" in r:
        row["hops_mean"] = r["hops"]["mean"]
    if "relays" in r:
        row.update(relays_mean=r["relays"]["mean"], relays_sd=r["relays"]["sd"],
                   relays_max=r["relays"]["max"])
    return [dict(row, **common)]


def _built(overlay: dict) -> str:
    short = {"debruijn": "B", "kautz": "K", "polytope": "H", "torus": "T"}
    if overlay["family"] in short:
        return f"{short[overlay['family']]}({overlay['degree']},{overlay['digits']})"
    return f"{overlay['family']}({overlay['degree']})"


def _csv_rows(outcome: Outcome) -> list[dict]:
    rows = []
    for i, (point, result) in enumerate(zip(outcome.points, outcome.results)):
        params = dict(point, **result.parameters)
        if isinstance(point.get("placement"), str):  # a file as written, not its map
            params["placement"] = point["placement"]
        params = {k: params[k] for k in POINT_KEYS
                  if k in params and not isinstance(params[k], (list, tuple))}
        # A result column (exchange's actual repetitions) wins over the requested parameter.
        rows.extend({"point": i + 1, **params, **flat} for flat in flat_rows(result))
    return rows


def _columns(rows: list[dict]) -> list[str]:
    seen = {}
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)


def csv_text(outcome: Outcome) -> str:
    rows = _csv_rows(outcome)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=_columns(rows), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def json_text(outcome: Outcome) -> str:
    s = outcome.scenario
    doc = {"scenario": s.name, "description": s.description, "fixed": s.fixed,
           "sweep": {axis: list(values) for axis, values in s.sweep},
           "platform_overrides": s.platform_overrides,
           "points": [{"point": i + 1, "parameters": p, "result": r.to_dict()}
                      for i, (p, r) in enumerate(zip(outcome.points, outcome.results))]}
    return json.dumps(doc, indent=2) + "\n"


def table(outcome: Outcome) -> str:
    """One aligned text table: the swept parameters, then the headline results."""
    s = outcome.scenario
    swept = s.swept_keys()
    rows = []
    for point, result in zip(outcome.points, outcome.results):
        for flat in flat_rows(result):
            rows.append({**{k: point.get(k, "") for k in swept}, **flat})
    columns = swept + [c for c in _HEADLINE if any(c in r for r in rows)]
    # A statistic the engine computed as a double prints "235" in JSON when it happens to be
    # whole; a column holding any float is printed as floats throughout.
    real = {c for c in columns if any(isinstance(r.get(c), float) for r in rows)}
    cells = [[_cell(c, r.get(c, ""), c in real) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[j]) for row in cells)) for j, c in enumerate(columns)]
    fixed = " ".join(f"{k}={v}" for k, v in s.fixed.items())
    lines = [f"# {s.name}: {s.description}" if s.description else f"# {s.name}"]
    if fixed:
        lines.append(f"# {fixed}")
    if s.platform_overrides:
        lines.append("# platform_overrides: "
                     + " ".join(f"{k}={v}" for k, v in s.platform_overrides.items()))
    lines.append("  ".join(c.rjust(w) for c, w in zip(columns, widths)))
    lines.extend("  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in cells)
    return "\n".join(lines) + "\n"


def _cell(column: str, value, real: bool = False) -> str:
    if value is None:
        return "-"  # a statistic over no kept sample (JSON null)
    if isinstance(value, float) or (real and isinstance(value, int) and not isinstance(value, bool)):
        return f"{value:.2f}"
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def check_out(out_dir: str | Path) -> Path:
    """--out, refused before any run unless a file can really be created there (or in the
    nearest existing folder above it, which write_outputs would create it from)."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a folder")
    for name in ("results.json", "results.csv"):
        if (out / name).is_dir():
            raise InputError(f"--out {out}: cannot write results: {out / name} is a folder")
    existing = out.absolute()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise InputError(f"--out {out}: {existing} is not a folder")
    probe_writable(existing, f"--out {out}")
    return out


def probe_writable(folder: Path, flag: str) -> None:
    """InputError unless a file can be created in folder (os.access says yes to root on
    read-only file systems such as /proc, so a file is created and removed)."""
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".hopsim-probe-")
    except OSError as e:
        raise InputError(f"{flag}: cannot create files in {folder}: {e.strerror}") from None
    os.close(fd)
    os.unlink(tmp)


def write_outputs(outcome: Outcome, out_dir: str | Path) -> tuple[Path, Path]:
    """results.json and results.csv in out_dir, each written whole or not at all; folders
    this call created are removed again when writing fails (a full disk, an interrupt)."""
    out = Path(out_dir)
    contents = {out / "results.json": json_text(outcome), out / "results.csv": csv_text(outcome)}
    created = [p for p in (out, *out.parents) if not p.exists()]
    temps = {}
    try:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InputError(f"--out {out}: cannot create the folder: {e.strerror}") from None
        for final in contents:
            # Checked before writing anything, so that one file is never replaced without the other.
            if final.is_dir():
                raise InputError(f"--out {out}: cannot write results: {final} is a folder")
        for final, text in contents.items():
            fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{final.name}.", suffix=".tmp")
            temps[final] = tmp
            # mkstemp makes 0600 files; results are ordinary files (0666 less the umask).
            os.fchmod(fd, 0o666 & ~_umask())
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(text)
        for final, tmp in temps.items():
            os.replace(tmp, final)
    except BaseException as e:
        for tmp in temps.values():
            if os.path.exists(tmp):
                os.unlink(tmp)
        for folder in created:  # innermost first
            try:
                folder.rmdir()
            except OSError:
                break
        if isinstance(e, OSError):
            raise InputError(f"--out {out}: cannot write results: {e.strerror}") from None
        raise
    return out / "results.json", out / "results.csv"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
