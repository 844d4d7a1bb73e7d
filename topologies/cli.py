"""hopsim topology FAMILY --ranks N [--degree D] [--seed S] [--out DIR] [--plot FILE.png] [--json]

Route statistics of one overlay over all ordered pairs, optionally RayPlatform's four
files and a figure. hopsim.cli calls add_parser and run; bad input raises InputError
(one line, exit status 2) before any file is written.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path

from ..errors import InputError
from ..cli import seed_value
from .overlays import FAMILIES, RAY_SEED, OverlayError, build_overlay, shape
from .plot import plot_overlay
from .rayfiles import FILES, write_ray_files
from .statistics import RouteStatistics, route_statistics

_PARAMETERS = {"debruijn": ("b", "D"), "kautz": ("d", "D"), "polytope": ("b", "L"),
               "hypercube": ("b", "L"), "torus": ("r", "D")}


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "topology", help="overlay topologies: statistics, Ray files, plots",
        description="Route statistics of a software-routed overlay over all ordered pairs of "
                    "ranks: diameter, route lengths, relay events per rank (docs/overlays.md).")
    p.add_argument("family", metavar="FAMILY", help="the overlay family: " + ", ".join(FAMILIES))
    p.add_argument("--ranks", type=int, required=True, metavar="N",
                   help="required: number of ranks (vertices), 1 to 16384; each family "
                        "accepts only the sizes it can build (docs/overlays.md)")
    p.add_argument("--degree", type=int, default=0, metavar="D",
                   help="the family's parameter: de Bruijn base b, Kautz d, polytope alphabet "
                        "size, torus radix. Default 0: RayPlatform's rule; for de Bruijn that "
                        "is Ray's default degree 2 (1024 ranks: B(2,10)), for Kautz the "
                        "largest d that fits, for polytope and torus 2. A degree that does "
                        "not fit N is an error")
    p.add_argument("--seed", type=seed_value, default=1, metavar="S",
                   help="random family: an integer 0..2^64-1 drawing the edges and the "
                        "route ties (default 1); 'ray': RayPlatform's own random graph and "
                        "per-pair routes")
    p.add_argument("--out", metavar="DIR",
                   help="write RayPlatform's " + ", ".join(FILES) + " into DIR, created if "
                        "missing (default: no files)")
    p.add_argument("--plot", metavar="FILE.png",
                   help="draw the graph (small N), the route lengths and the relay load into "
                        "this PNG file (default: no figure)")
    p.add_argument("--json", action="store_true",
                   help="print the statistics as one JSON object instead of the summary")
    return p


def run(args: argparse.Namespace) -> int:
    family, ranks, degree = args.family, args.ranks, args.degree
    if args.seed != RAY_SEED and not 0 <= args.seed < 2 ** 64:
        raise InputError(f"--seed must be an integer in 0..2^64-1, got {args.seed}")
    try:
        shape(family, ranks, degree, args.seed)  # cheap: reject sizes before building anything
    except OverlayError as e:
        raise InputError(str(e)) from None
    out = Path(args.out) if args.out else None
    plot = Path(args.plot) if args.plot else None
    if out is not None:
        _check_directory_target(out, "--out")
    if plot is not None:
        _check_file_target(plot, "--plot")

    try:
        overlay = _interruptible(build_overlay, family, ranks, degree, args.seed)
    except OverlayError as e:
        raise InputError(str(e)) from None
    stats = _interruptible(route_statistics, overlay)

    notes = _write_outputs(overlay, stats, out, plot)
    if args.json:
        sys.stdout.write(json.dumps(stats.to_json(), indent=2) + "\n")
        sys.stderr.writelines(f"hopsim: {note}\n" for note in notes)
    else:
        sys.stdout.write(summary_text(stats))
        sys.stdout.writelines(f"{note}\n" for note in notes)
    return 0


def _interruptible(fn, *args):
    """fn(*args) in a worker thread, so that Ctrl-C reaches the main thread at once: the
    engine releases the GIL while it builds an overlay or walks its n^2 routes (seconds to
    minutes at 16384 ranks), and Python delivers KeyboardInterrupt only to the main thread
    between bytecodes. Nothing has been written yet when these run; the abandoned worker
    ends with the process."""
    outcome = {}

    def work():
        try:
            outcome["value"] = fn(*args)
        except BaseException as e:  # handed to the main thread as it is
            outcome["error"] = e

    worker = threading.Thread(target=work, name="hopsim-topology", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.05)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _write_outputs(overlay, stats: RouteStatistics, out: Path | None, plot: Path | None) -> list[str]:
    # The figure is rendered next to its destination first and moved last, so that a
    # failure anywhere leaves neither it nor the Ray files behind.
    notes = []
    staged_plot = None
    try:
        if plot is not None:
            staged_plot = plot.with_name(f".hopsim-{os.getpid()}-{plot.name}")
            plot_overlay(overlay, staged_plot, stats)
        if out is not None:
            write_ray_files(overlay, out, stats)
            notes.append(f"wrote {', '.join(FILES)} in {out}")
        if staged_plot is not None:
            os.replace(staged_plot, plot)
            staged_plot = None
            notes.append(f"wrote {plot}")
    except OSError as e:
        raise InputError(f"cannot write {e.filename or out or plot}: {e.strerror or e}") from None
    finally:
        if staged_plot is not None and staged_plot.exists():
            staged_plot.unlink()
    return notes


def _existing_ancestor(path: Path, flag: str) -> Path:
    p = path.absolute()
    while not p.exists():
        p = p.parent
    if not p.is_dir():
        raise InputError(f"{flag} {path}: {p} is not a directory")
    if not os.access(p, os.W_OK | os.X_OK):
        raise InputError(f"{flag} {path}: {p} is not writable")
    return p


def _check_directory_target(path: Path, flag: str) -> None:
    if path.exists() and not path.is_dir():
        raise InputError(f"{flag} {path}: exists and is not a directory")
    _existing_ancestor(path, flag)


def _check_file_target(path: Path, flag: str) -> None:
    if path.is_dir():
        raise InputError(f"{flag} {path}: is a directory")
    if not path.parent.absolute().is_dir():
        raise InputError(f"{flag} {path}: the directory {path.parent} does not exist")
    _existing_ancestor(path.parent, flag)


def summary_text(stats: RouteStatistics) -> str:
    """The readable summary ``hopsim topology`` prints without --json."""
    n = stats.ranks
    names = _PARAMETERS.get(stats.family)
    params = f" ({names[0]}={stats.degree}, {names[1]}={stats.digits})" if names else ""
    lengths = "  ".join(f"{h}: {c}" for h, c in stats.route_lengths.items())
    degrees, conns = stats.out_degrees, stats.connections
    lines = [
        f"{stats.name}: {n} ranks",
        f"  degree parameter      {stats.degree}{params}",
        f"  arcs                  {stats.arcs} (self-loops included; a complete graph has {n * (n - 1)})",
        f"  out-degree per rank   {_spread(degrees)}",
        f"  connections per rank  {_spread(conns)} (round-robin list: in-neighbours and itself)",
        f"  diameter              {stats.diameter} hops",
        f"  mean route length     {stats.mean_hops:.4f} hops over {n * (n - 1)} ordered pairs (s != d)",
        f"  route lengths         {lengths}  (hops: ordered pairs, s == d at 0)",
        f"  relay events per rank mean {stats.relay_mean:.2f}, SD {stats.relay_sd:.2f} "
        f"(RayPlatform's Summary.txt: {stats.relay_ray_sd:g}), max {stats.relay_max} "
        f"(one message per ordered pair)",
    ]
    return "\n".join(lines) + "\n"


def _spread(values: list[int]) -> str:
    lo, hi = min(values), max(values)
    if lo == hi:
        return f"{lo} (every rank)"
    return f"min {lo}, mean {sum(values) / len(values):.2f}, max {hi}"
