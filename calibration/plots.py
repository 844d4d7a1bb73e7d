"""The figures of calibrate (fit) and validate (measured versus simulated), PNG."""
from __future__ import annotations

import math
from pathlib import Path

from ..errors import InputError


def check_path(path: str) -> None:
    """Refuse a plot path before any work: wrong suffix or a folder that is missing."""
    p = Path(path)
    if p.suffix.lower() != ".png":
        raise InputError(f"--plot: expected a .png file name, got {path!r}")
    if not p.parent.is_dir():
        raise InputError(f"--plot: folder {str(p.parent)!r} does not exist")


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def validation_plot(report, path: str) -> str:
    plt = _pyplot()
    groups: dict = {}
    for c in report.cases:
        groups.setdefault((Path(c.file).name, c.workload, c.ranks, c.ranks_per_node), []).append(c)
    n = len(groups)
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False)
    for ax, ((name, workload, ranks, rpn), cases) in zip(axes.flat, groups.items()):
        cases = sorted(cases, key=lambda c: c.bytes)
        x = [max(c.bytes, 0.5) for c in cases]
        ax.plot(x, [c.measured_us for c in cases], "o-", label="measured")
        ax.plot(x, [c.simulated_us for c in cases], "s--", label="simulated")
        if len(cases) > 1:
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
        ax.set_title(f"{name}\n{workload}, {ranks} ranks, {rpn}/node", fontsize=8)
        ax.set_xlabel("bytes (0 drawn at 0.5)")
        ax.set_ylabel(cases[0].statistic)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    med = report.median_abs_error_pct
    fig.suptitle(f"{report.platform}: median |error| {med:.1f}%" if med is not None else report.platform)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def fit_plot(fit, simulated: dict[int, float], path: str) -> str:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    pts = fit.data.pingpong
    ax.plot([max(p.size, 0.5) for p in pts], [p.value for p in pts], "o", ms=4, label="measured")
    for seg in fit.segments:
        xs = [max(seg.first_bytes, 0.5), max(seg.last_bytes, 0.5)]
        ax.plot(xs, [seg.at(x) for x in (seg.first_bytes, seg.last_bytes)], "-", lw=2, alpha=0.6,
                label=f"segment {seg.first_bytes}..{seg.last_bytes} B")
    if simulated:
        xs = sorted(simulated)
        ax.plot([max(x, 0.5) for x in xs], [simulated[x] for x in xs], "k--", label="engine, fitted platform")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message bytes (0 drawn at 0.5)")
    ax.set_ylabel("one-way time (us)")
    ax.set_title(f"{fit.platform.name}: ping-pong fit")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
