"""Running a scenario: check every point, run them, print one table, write JSON and CSV.

Outputs are deterministic: for the same scenario and seeds, results.csv is byte-identical
and results.json differs only in the wall_seconds values (the one measured quantity; it
is deliberately left out of the CSV).
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..result import Result
from . import parallel, sweep
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
    """The finished points (numbers: their 1-based place in the scenario, in order) and
    the points that failed (hopsim.scenarios.sweep.Failure)."""

    scenario: Scenario
    points: list[dict]
    results: list[Result]
    numbers: tuple = ()
    failures: tuple = ()

    def point_numbers(self) -> list[int]:
        return list(self.numbers) if self.numbers else list(range(1, len(self.points) + 1))


def check(scenario: Scenario) -> list[dict]:
    """The points, each validated (platform, placement, parameters, memory) before any runs."""
    return sweep.plan(scenario).points


def run(scenario: Scenario, progress: bool = False, jobs: int = 1) -> Outcome:
    """Run every point (jobs > 1: in worker processes); progress (for a terminal) goes to
    stderr. A failing point is in outcome.failures; the others still run."""
    return run_plan(sweep.plan(scenario), jobs=jobs, progress=progress)


def run_plan(plan, jobs: int = 1, progress: bool = False, backend=None, records=None,
             done: dict | None = None, budget: int | None = None) -> Outcome:
    """A checked plan (hopsim.scenarios.sweep.plan) run on backend (default: this process
    for jobs 1 or one point, else jobs worker processes); see sweep.execute."""
    if backend is None:
        left = len(plan.points) - len(done or {})
        backend = parallel.Inline() if jobs <= 1 or left <= 1 else parallel.Processes(jobs)
    finished, failures = sweep.execute(plan, backend, records, done, progress, budget)
    numbers = sorted(finished)
    return Outcome(plan.scenario, [plan.points[k - 1] for k in numbers],
                   [Result(**finished[k]["result"]) for k in numbers], tuple(numbers),
                   tuple(failures))


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
    for i, point, result in zip(outcome.point_numbers(), outcome.points, outcome.results):
        params = dict(point, **result.parameters)
        if isinstance(point.get("placement"), str):  # a file as written, not its map
            params["placement"] = point["placement"]
        params = {k: params[k] for k in POINT_KEYS
                  if k in params and not isinstance(params[k], (list, tuple))}
        # A result column (exchange's actual repetitions) wins over the requested parameter.
        rows.extend({"point": i, **params, **flat} for flat in flat_rows(result))
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
           "points": [{"point": i, "parameters": p, "result": r.to_dict()}
                      for i, p, r in zip(outcome.point_numbers(), outcome.points,
                                         outcome.results)]}
    if outcome.failures:  # only then: a complete sweep's file is what it always was
        doc["failed"] = [{"point": f.number, "parameters": f.parameters,
                          "error": f.error} for f in outcome.failures]
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


def check_out(out_dir: str | Path, plot=None) -> Path:
    """--out (and --plot), refused before any run as the outputs module would refuse them
    at the end (hopsim.outputs: only regular files, never a folder or a device)."""
    from ..outputs import Outputs

    transaction = Outputs()
    folder = transaction.folder(out_dir, "--out")
    for name in ("results.json", "results.csv"):
        transaction.file(Path(folder) / name, "--out")
    if plot is not None:
        transaction.file(plot, "--plot", ".png")
    transaction.abort()
    return Path(out_dir)


def write_outputs(outcome: Outcome, out_dir: str | Path, plot=None) -> list[Path]:
    """results.json and results.csv in out_dir (and the figure at plot), through
    hopsim.outputs: each whole, all together or none."""
    from ..outputs import Outputs
    from .figures import plot as draw

    with Outputs() as outputs:
        folder = outputs.folder(out_dir, "--out")
        paths = [outputs.file(Path(folder) / n, "--out") for n in ("results.json", "results.csv")]
        figure = outputs.file(plot, "--plot", ".png") if plot is not None else None
        outputs.text(paths[0], json_text(outcome))
        outputs.text(paths[1], csv_text(outcome))
        if figure is not None:
            outputs.write(figure, lambda tmp: draw(outcome, tmp))
    return paths + ([Path(plot)] if plot is not None else [])
