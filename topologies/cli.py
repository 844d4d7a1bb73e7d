"""hopsim topology FAMILY --ranks N [--degree D] [--seed S] [--out DIR] [--plot FILE.png] [--json]

Route statistics of one overlay over all ordered pairs, optionally RayPlatform's four
files and a figure. hopsim.cli calls add_parser and run; bad input raises InputError
(one line, exit status 2) before any file is written.
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path

from ..errors import InputError
from ..cli import seed_value
from .overlays import FAMILIES, RAY_SEED, OverlayError, build_overlay, shape
from .plot import plot_overlay
from .rayfiles import FILES
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
    from ..outputs import Outputs

    outputs = Outputs()  # every target refused now, before the (possibly long) build
    out = outputs.folder(args.out, "--out") if args.out is not None else None
    ray = [outputs.file(out / name, "--out") for name in FILES] if out is not None else []
    plot = outputs.file(args.plot, "--plot", ".png") if args.plot is not None else None

    try:
        overlay = _interruptible(build_overlay, family, ranks, degree, args.seed)
    except OverlayError as e:
        raise InputError(str(e)) from None
    # On this (the main) thread: the engine walks in its own worker, which only stores
    # the fraction done, and wakes this thread every 50 ms to run Python's signal
    # handlers and draw the bar, as simulate does with its child (docs/hardening.md).
    from ..progress import bar

    with bar("routes") as tick:
        stats = route_statistics(overlay, tick)

    notes = _write_outputs(outputs, overlay, stats, out, ray, plot)
    if args.json:
        sys.stdout.write(json.dumps(stats.to_json(), indent=2) + "\n")
        sys.stderr.writelines(f"hopsim: {note}\n" for note in notes)
    else:
        sys.stdout.write(summary_text(stats))
        sys.stdout.writelines(f"{note}\n" for note in notes)
    return 0


def _interruptible(fn, *args):
    """fn(*args) in a worker thread, so that Ctrl-C reaches the main thread at once: the
    engine releases the GIL while it builds an overlay (minutes for the random family at
    16384 ranks), and Python delivers KeyboardInterrupt only to the main thread between
    bytecodes. Nothing has been written yet when this runs; the abandoned worker ends
    with the process. (The route walk needs none of this: its binding waits on the main
    thread and handles signals itself.)"""
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


def _write_outputs(outputs, overlay, stats: RouteStatistics, out, ray: list, plot) -> list[str]:
    # Staged beside their targets and renamed together (hopsim.outputs): a failure
    # anywhere leaves neither the figure nor any Ray file behind.
    from .rayfiles import WRITERS

    notes = []
    with outputs:
        for path, writer in zip(ray, WRITERS):
            outputs.write(path, lambda tmp, w=writer: _write_ray(tmp, w, overlay, stats))
        if plot is not None:
            outputs.write(plot, lambda tmp: plot_overlay(overlay, Path(tmp), stats))
    if out is not None:
        notes.append(f"wrote {', '.join(FILES)} in {out}")
    if plot is not None:
        notes.append(f"wrote {plot}")
    return notes


def _write_ray(tmp, writer, overlay, stats) -> None:
    with open(tmp, "w", encoding="ascii") as f:
        writer(f, overlay, stats)


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
