"""`hopsim validate` and `hopsim calibrate`: parsers and runners (registered in hopsim.cli)."""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from ..errors import InputError


def _positive(text: str) -> int:
    import argparse
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {v}")
    return v


def _placement(p):
    p.add_argument("--nodes", type=_positive, metavar="N",
                   help="number of nodes of the platform (default: the platform's "
                        "nodes.count; calibrate without --base: 2)")
    p.add_argument("--ranks-per-node", type=_positive, metavar="K",
                   help="ranks per node in the measured runs, e.g. 2 for a ping-pong inside "
                        "one node (default: what the file says, else 1)")


def add_validate(sub):
    p = sub.add_parser("validate", help="measured versus simulated, case by case",
                       description="Simulate every measured case of FILES (osu_latency, IMB, "
                                   "NetPIPE, latency_checker, Ray, hopsim JSON) on a platform "
                                   "and print measured, simulated and the error.")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="one or more measurement files (the format is recognised from the "
                        "content; docs/validation.md)")
    p.add_argument("--platform", required=True, metavar="NAME_OR_FILE",
                   help="required: the preset name or platform TOML file to simulate on")
    _placement(p)
    p.add_argument("--json", action="store_true",
                   help="print one JSON object instead of the table")
    p.add_argument("--plot", metavar="FILE.png",
                   help="also draw measured and simulated curves into this PNG file "
                        "(default: no figure)")
    p.add_argument("--seed", type=int, default=1, metavar="S",
                   help="random seed of the simulations, an integer 0..2^64-1 (default 1)")


def run_validate(args) -> int:
    from . import plots
    from .validate import validate

    if args.plot:
        plots.check_path(args.plot)
    report = validate(args.platform, args.files, nodes=args.nodes,
                      ranks_per_node=args.ranks_per_node, seed=args.seed)
    if args.plot:
        _atomic(args.plot, lambda tmp: plots.validation_plot(report, tmp))
    sys.stdout.write(json.dumps(report.to_dict()) + "\n" if args.json else report.table())
    if args.plot and not args.json:
        sys.stdout.write(f"wrote {args.plot}\n")
    return 0


def add_calibrate(sub):
    p = sub.add_parser("calibrate", help="fit a platform to measurements",
                       description="Fit a platform's network and host parameters to FILES; "
                                   "write it with the provenance of every number, plus the "
                                   "SimGrid platform XML and SMPI flags beside it.")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="one or more measurement files (osu_latency, IMB, NetPIPE, "
                        "latency_checker, Ray, hopsim JSON; docs/calibration.md)")
    _placement(p)
    p.add_argument("--base", metavar="PLATFORM",
                   help="preset or platform TOML file giving every value the data cannot "
                        "determine (default: none; then the files must determine the "
                        "network latency and bandwidth)")
    p.add_argument("--out", required=True, metavar="PLATFORM.toml",
                   help="required: the platform file to write, in an existing folder; "
                        "PLATFORM.xml and PLATFORM.smpi are written beside it")
    p.add_argument("--name", metavar="NAME",
                   help="the new platform's name (default: --out's file name without .toml)")
    p.add_argument("--plot", metavar="FIT.png",
                   help="also draw the ping-pong fit into this PNG file (default: no figure)")


def run_calibrate(args) -> int:
    from . import plots
    from .calibrate import calibrate_files

    out = Path(args.out)
    if out.suffix != ".toml":
        raise InputError(f"--out: expected a .toml file name, got {args.out!r}")
    if not out.parent.is_dir():
        raise InputError(f"--out: folder {str(out.parent)!r} does not exist")
    if args.plot:
        plots.check_path(args.plot)
    result = calibrate_files(args.files, base=args.base, nodes=args.nodes,
                             ranks_per_node=args.ranks_per_node,
                             name=args.name or out.stem, argv=sys.argv[1:])
    # Everything is computed: only now write, each file whole or not at all.
    xml, cfg = out.with_suffix(".xml"), out.with_suffix(".smpi")
    _atomic(out, lambda tmp: Path(tmp).write_text(result.toml, encoding="utf-8"))
    _atomic(xml, lambda tmp: Path(tmp).write_text(result.simgrid_xml, encoding="utf-8"))
    _atomic(cfg, lambda tmp: Path(tmp).write_text(result.smpi_flags, encoding="utf-8"))
    if args.plot:
        _atomic(args.plot, lambda tmp: plots.fit_plot(result.fit, result.simulated, tmp))
    sys.stdout.write(result.text)
    sys.stdout.write(f"wrote {out}, {xml} (SimGrid platform) and {cfg} (SMPI --cfg flags)"
                     + (f", {args.plot}" if args.plot else "") + "\n")
    return 0


def _atomic(path, write) -> None:
    """write(tmp) then rename onto path: an interrupted run leaves no half file."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
