"""One figure for a scenario that compares overlays (`hopsim run SCENARIO --plot FILE.png`).

Two kinds, named by the scenario's `plot` key or else chosen from what it sweeps:
- a degree sweep (degree varies): mean round trip and mean hops against the overlay's
  degree, log x, one line per family;
- an overlay comparison (overlay varies): grouped bars per family, one bar per rank
  count, of mean round trip, mean hops and relay load (mean with sd, and max).

Drawn with matplotlib's Agg canvas directly (no pyplot state, no display needed); the
file appears only once complete.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import InputError
from .scenario import Scenario

_NAMES = {"complete": "complete graph", "debruijn": "de Bruijn", "kautz": "Kautz",
          "random": "random", "group": "group", "polytope": "polytope",
          "hypercube": "hypercube", "torus": "torus"}


def kind(scenario: Scenario) -> str:
    """"degree" or "overlays"; InputError when the scenario has nothing to plot."""
    points = scenario.points()
    if points and points[0].get("workload") == "roundtrip" and all(
            p.get("workload") == "roundtrip" for p in points):
        if scenario.plot:
            return scenario.plot
        swept = scenario.swept_keys()
        if "overlay" in swept:
            return "overlays"
        if "degree" in swept and all("overlay" in p for p in points):
            return "degree"
    raise InputError(f"--plot: {scenario.source} is not an overlay comparison or a degree "
                     "sweep (a roundtrip scenario sweeping overlay or degree)")


def check_path(path: str | os.PathLike) -> Path:
    """The plot's path, refused before any run if it cannot be written there."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"--plot {p}: is a folder")
    if p.suffix.lower() != ".png":
        raise InputError(f"--plot {p}: the figure is a PNG; give a file name ending in .png")
    parent = p.absolute().parent
    if not parent.is_dir():
        raise InputError(f"--plot {p}: folder {parent} does not exist")
    from ..outputs import _probe

    _probe(parent, "--plot", p)
    return p


def plot(outcome, path: str | os.PathLike) -> Path:
    """Draw the scenario's figure into path (PNG). Returns the path."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = check_path(path)
    rows = _rows(outcome)
    which = kind(outcome.scenario)
    if which == "degree":
        fig = Figure(figsize=(12, 5.2), layout="constrained")
        FigureCanvasAgg(fig)
        _degree_figure(fig, rows)
    else:
        fig = Figure(figsize=(16, 5.2), layout="constrained")
        FigureCanvasAgg(fig)
        _overlay_figure(fig, rows)
    s = outcome.scenario
    platform = outcome.results[0].platform
    reception = outcome.results[0].parameters.get("reception", "")
    fig.suptitle(f"{s.name}: {s.description}\nplatform {platform}, {reception} reception",
                 fontsize=12)
    try:
        fd, staged = tempfile.mkstemp(prefix=".hopsim-plot-", suffix=".png",
                                      dir=path.absolute().parent)
    except OSError as e:
        raise InputError(f"--plot {path}: cannot write the figure: {e.strerror}") from None
    os.close(fd)
    try:
        fig.savefig(staged, dpi=110, format="png")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staged, 0o666 & ~umask)
        os.replace(staged, path)
    except OSError as e:
        raise InputError(f"--plot {path}: cannot write the figure: {e.strerror}") from None
    finally:
        if os.path.exists(staged):
            os.unlink(staged)
    return path


def _rows(outcome) -> list[dict]:
    from ..topologies.overlays import shape

    rows = []
    for point, result in zip(outcome.points, outcome.results):
        r = result.results
        family = point.get("overlay", "complete")
        # The overlay actually built (a default degree resolved by RayPlatform's rule).
        built = r.get("overlay") or {"degree": shape(family, result.ranks, 0).degree}
        degree = built["degree"]
        rows.append({"family": family, "ranks": result.ranks, "degree": degree,
                     "rtt": r["rtt_us"]["mean"], "hops": r.get("hops", {}).get("mean", 1.0),
                     "relays_mean": r.get("relays", {}).get("mean", 0.0),
                     "relays_sd": r.get("relays", {}).get("sd", 0.0),
                     "relays_max": r.get("relays", {}).get("max", 0)})
    return rows


def _families(rows) -> list[str]:
    return list(dict.fromkeys(r["family"] for r in rows))


def _overlay_figure(fig, rows) -> None:
    families = _families(rows)
    # Bar i of a family is its i-th rank count (Kautz sizes only approximate the others').
    by_family = {f: sorted((r for r in rows if r["family"] == f), key=lambda r: r["ranks"])
                 for f in families}
    slots = max(len(v) for v in by_family.values())
    width = 0.8 / slots
    colours = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3"]
    axes = fig.subplots(1, 3)
    panels = [("rtt", "mean round trip (µs)", "Mean round trip (lower is better)"),
              ("hops", "mean hops per message", "Route length"),
              ("relays_mean", "messages relayed per rank, whole run",
               "Relay load: mean ± sd over ranks, ▲ max")]
    for ax, (key, ylabel, title) in zip(axes, panels):
        for i in range(slots):
            xs, ys, sds, maxes, sizes = [], [], [], [], []
            for j, f in enumerate(families):
                if i < len(by_family[f]):
                    r = by_family[f][i]
                    xs.append(j + (i - (slots - 1) / 2) * width)
                    ys.append(r[key])
                    sds.append(r["relays_sd"])
                    maxes.append(r["relays_max"])
                    sizes.append(r["ranks"])
            label = "≈" + "/".join(str(n) for n in sorted(set(sizes))) + " ranks"
            extra = dict(yerr=sds, capsize=3) if key == "relays_mean" else {}
            bars = ax.bar(xs, ys, width, color=colours[i % len(colours)], label=label, **extra)
            if key == "relays_mean":
                ax.scatter(xs, maxes, marker="^", color="black", zorder=3,
                           label="max relayed by one rank" if i == 0 else None)
            else:
                for b, n, y in zip(bars, sizes, ys):
                    ax.annotate(f"{y:.0f}" if key == "rtt" else f"{y:.1f}",
                                (b.get_x() + b.get_width() / 2, y), ha="center",
                                va="bottom", fontsize=8)
        ax.set_xticks(range(len(families)))
        ax.set_xticklabels([_NAMES.get(f, f) for f in families])
        ax.set_xlabel("overlay family")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(axis="y", alpha=0.3)
        if key == "relays_mean" and any(r["relays_max"] > 0 for r in rows):
            ax.set_yscale("symlog", linthresh=10)
            ax.set_ylim(0, 3 * max(r["relays_max"] for r in rows))
        else:
            ax.set_ylim(0, 1.1 * max(r[key] for r in rows))
        ax.legend(fontsize=8, loc="upper left" if key == "relays_mean" else "best")


def _degree_figure(fig, rows) -> None:
    families = _families(rows)
    markers = "osD^v"
    # Most points share one rank count; only the others are labelled with theirs.
    sizes = [r["ranks"] for r in rows]
    usual = max(set(sizes), key=sizes.count)
    axes = fig.subplots(1, 2)
    panels = [("rtt", "mean round trip (µs, log scale)", "Mean round trip vs degree (lower is better)"),
              ("hops", "mean hops per message", "Route length vs degree")]
    for ax, (key, ylabel, title) in zip(axes, panels):
        for k, f in enumerate(families):
            pts = sorted((r for r in rows if r["family"] == f), key=lambda r: r["degree"])
            xs = [r["degree"] for r in pts]
            ys = [r[key] for r in pts]
            ax.plot(xs, ys, marker=markers[k % len(markers)], label=_NAMES.get(f, f))
            for r, x, y in zip(pts, xs, ys):
                if r["ranks"] != usual:
                    ax.annotate(f"n={r['ranks']}", (x, y), textcoords="offset points",
                                xytext=(5, -12 if k % 2 else 6), fontsize=7)
        ax.set_xscale("log", base=2)
        ticks, labels = [], []
        for t in sorted({r["degree"] for r in rows}):
            if ticks and t <= 1.3 * ticks[-1]:  # 63 and 64 would print over each other
                labels[-1] += f"/{t}"
            else:
                ticks.append(t)
                labels.append(str(t))
        ax.set_xticks(ticks)
        ax.set_xticklabels(labels)
        ax.minorticks_off()
        if key == "rtt":
            ax.set_yscale("log")
        ax.set_xlabel("degree (connections per rank; log scale)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=9, title=f"n = {usual} ranks unless marked", title_fontsize=8)
