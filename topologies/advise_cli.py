"""`hopsim advise`: the overlay advisor's command line (topologies/advise.py)."""
from __future__ import annotations

import argparse
import json
import sys

from ..machine import cores


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def add_parser(sub):
    p = sub.add_parser("advise", help="recommend a routing overlay for N ranks on a platform",
                       description="Simulate Ray's network test on every overlay family and "
                                   "degree that fits --ranks (the nearest sizes where a family "
                                   "fits none), print the table and recommend one: the lowest "
                                   "mean round trip, or within 2%% of it the fewest connections "
                                   "per rank (docs/overlays.md, 'The advisor').")
    p.add_argument("--platform", required=True, metavar="NAME_OR_FILE",
                   help="required: a preset name or a platform TOML file; its nodes are scaled "
                        "to what --ranks needs")
    p.add_argument("--ranks", required=True, type=_int, metavar="N",
                   help="required: ranks, 2 to 16384")
    p.add_argument("--ranks-per-node", type=_int, default=1, metavar="K",
                   help="ranks placed on each node, in blocks (default 1)")
    p.add_argument("--reception", choices=("any-source", "round-robin"),
                   help="reception policy (default: the platform's host.reception)")
    p.add_argument("--max-connections", type=_int, metavar="C",
                   help="drop overlays where a rank keeps more than C peers (its round-robin "
                        "list: in-neighbours and itself); default: no limit")
    p.add_argument("--exchanges", type=_int, default=10, metavar="N",
                   help="round trips per rank in each candidate's run (default 10)")
    p.add_argument("--transport", choices=("flow", "queue"),
                   help="default: queue on star platforms (fast under contention, "
                        "docs/model.md), else the platform's")
    p.add_argument("--seed", type=_int, default=1, help="random seed (default 1)")
    p.add_argument("--jobs", type=_int, metavar="J",
                   help="candidates simulated at once, in worker processes (default: the cores)")
    p.add_argument("--json", action="store_true",
                   help='print {"recommendation": {...}, "candidates": [...], ...} instead')
    return run


def run(args) -> int:
    from .. import bounds
    from .advise import advise, table

    bounds.check("advise.ranks", args.ranks, "--ranks")
    bounds.check("ranks_per_node", args.ranks_per_node, "--ranks-per-node")
    bounds.check("exchanges", args.exchanges, "--exchanges")
    bounds.check("seed", args.seed, "--seed")
    jobs = cores() if args.jobs is None else bounds.check("jobs", args.jobs, "--jobs")
    if args.max_connections is not None:
        bounds.check("max_connections", args.max_connections, "--max-connections")
    advice = advise(args.platform, args.ranks, args.ranks_per_node, args.reception,
                    args.max_connections, args.exchanges, args.transport, args.seed, jobs)
    sys.stdout.write(json.dumps(advice, indent=1) + "\n" if args.json else table(advice))
    return 0
