"""The hopsim command: simulate, run, platforms, topology, validate, calibrate.

Any bad input ends with one line on stderr naming the problem and exit status 2, with
no traceback and no output file left behind.
"""
from __future__ import annotations

import argparse
import os
import sys

from .errors import InputError

EXIT_INPUT = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but its errors are one line like every other input error."""

    def error(self, message):
        self.exit(EXIT_INPUT, f"{self.prog}: error: {message}\n")


def _int_list(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated byte counts like 0,1024,4096, got {text!r}") from None


def seed_value(text: str):
    """--seed: an integer, or "ray" (RayPlatform's fixed random overlay)."""
    if text == "ray":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or 'ray', got {text!r}") from None


def _add_simulate(sub):
    p = sub.add_parser("simulate", help="simulate one workload on one platform",
                       description="Simulate one workload. Prints the real tool's output "
                                   "(OSU table, latency_checker lines, IMB block), or with "
                                   "--json one JSON object.")
    p.add_argument("--platform", required=True, metavar="NAME_OR_FILE",
                   help="a preset (hopsim platforms) or a platform TOML file")
    p.add_argument("--workload", required=True, choices=("pingpong", "roundtrip", "exchange"))
    p.add_argument("--ranks", required=True, type=int, metavar="N")
    p.add_argument("--ranks-per-node", type=int, default=1, metavar="K")
    p.add_argument("--request-bytes", type=int, metavar="B", help="roundtrip (default 4000)")
    p.add_argument("--reply-bytes", type=int, metavar="B", help="roundtrip (default 4000)")
    p.add_argument("--exchanges", type=int, metavar="R",
                   help="roundtrip: round trips per rank (default 1000)")
    p.add_argument("--destinations", choices=("independent", "shared"),
                   help="roundtrip: per-rank random streams, or one sequence shared by all "
                        "ranks as latency_checker's seeding gives (default independent)")
    p.add_argument("--sizes", type=_int_list, metavar="0,1024,...",
                   help="pingpong/exchange message sizes (default 0 and powers of two to 4 MiB)")
    p.add_argument("--reception", choices=("any-source", "round-robin"),
                   help="override the platform's reception policy")
    p.add_argument("--transport", choices=("flow", "queue"),
                   help="override the platform's network.transport (docs/model.md)")
    p.add_argument("--overlay", metavar="FAMILY",
                   help="roundtrip: route over a software overlay (complete, debruijn, kautz, "
                        "random, group, polytope, hypercube, torus)")
    p.add_argument("--degree", type=int, metavar="D",
                   help="the overlay's degree parameter (de Bruijn base b, Kautz d, polytope "
                        "alphabet, torus radix). Default: RayPlatform's rule, which for de "
                        "Bruijn is Ray's default degree 2 (1024 ranks: B(2,10)); a degree that "
                        "does not fit the ranks is an error (docs/overlays.md)")
    p.add_argument("--seed", type=seed_value, default=1, metavar="S",
                   help="an integer, or 'ray' with --overlay random: RayPlatform's own random "
                        "graph and routes (default 1)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _run_simulate(args) -> int:
    from .api import simulate
    from .formats import text

    params = {k: getattr(args, k) for k in (
        "request_bytes", "reply_bytes", "exchanges", "destinations", "sizes", "reception",
        "overlay", "degree", "transport") if getattr(args, k) is not None}
    result = simulate(args.platform, args.workload, ranks=args.ranks,
                      ranks_per_node=args.ranks_per_node, seed=args.seed, **params)
    sys.stdout.write(result.to_json() + "\n" if args.json else text(result))
    return 0


def _add_run(sub):
    p = sub.add_parser("run", help="run a scenario (default: the embedded one)",
                       description="Run every point of a scenario, print one table and write "
                                   "results.json and results.csv into --out.")
    p.add_argument("scenario", nargs="?", metavar="SCENARIO",
                   help="a scenario file, or the name of a packaged scenario (default, "
                        "overlays, degree_sweep); without it, the embedded default scenario")
    p.add_argument("--out", default="out", metavar="DIR", help="output folder (default ./out)")
    p.add_argument("--plot", metavar="FILE.png",
                   help="also draw the scenario's figure (overlay comparisons and degree "
                        "sweeps) into this PNG")


def _run_run(args) -> int:
    from . import scenarios

    scenario = scenarios.load(args.scenario) if args.scenario else scenarios.default()
    if args.plot is not None:
        # Refused before any run: a bad path should not cost the whole scenario.
        from .scenarios import figures
        figures.kind(scenario)
        figures.check_path(args.plot)
    outcome = scenarios.run(scenario, progress=sys.stderr.isatty())
    paths = scenarios.write_outputs(outcome, args.out)
    sys.stdout.write(scenarios.table(outcome))
    sys.stdout.write(f"wrote {paths[0]} and {paths[1]}\n")
    if args.plot is not None:
        sys.stdout.write(f"wrote {scenarios.plot(outcome, args.plot)}\n")
    return 0


def _add_platforms(sub):
    sub.add_parser("platforms", help="list the built-in platform presets",
                   description="List the built-in presets, one line each.")


def _run_platforms(args) -> int:
    from . import platforms

    names = platforms.list_presets()
    width = max(map(len, names))
    for name in names:
        p = platforms.load_preset(name)
        sys.stdout.write(f"{name:<{width}}  {p.summary()}  {p.description}\n")
    return 0


def _add_topology(sub, argv):
    # hopsim.topologies (networkx) is imported only when the topology command runs.
    if argv[:1] == ["topology"]:
        try:
            from .topologies import cli as topology_cli
        except ImportError as e:
            raise _Unavailable(f"the topology command is not available: {e}") from None
        topology_cli.add_parser(sub)
        return topology_cli.run
    sub.add_parser("topology", help="overlay topologies: statistics, Ray files, plots",
                   add_help=False)
    return None


class _Unavailable(RuntimeError):
    """A part of hopsim this installation lacks (not the user's fault: exit 1)."""


def build_parser(argv: list[str]):
    parser = _Parser(prog="hopsim", description="Discrete-event simulation of MPI traffic "
                                                "on SimGrid.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)
    _add_simulate(sub)
    _add_run(sub)
    _add_platforms(sub)
    topology_run = _add_topology(sub, argv)
    from .calibration import cli as calibration_cli
    calibration_cli.add_validate(sub)
    calibration_cli.add_calibrate(sub)
    runners = {"simulate": _run_simulate, "run": _run_run, "platforms": _run_platforms,
               "topology": topology_run, "validate": calibration_cli.run_validate,
               "calibrate": calibration_cli.run_calibrate}
    return parser, runners


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        parser, runners = build_parser(argv)
        args = parser.parse_args(argv)
        status = runners[args.command](args)
        sys.stdout.flush()
    except InputError as e:
        sys.stderr.write(f"hopsim: error: {_one_line(e)}\n")
        return EXIT_INPUT
    except _Unavailable as e:
        sys.stderr.write(f"hopsim: error: {e}\n")
        return 1
    except BrokenPipeError:
        # A reader that closed early (hopsim ... | head) is not an error of ours; point
        # stdout at /dev/null so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("hopsim: interrupted\n")
        return 130
    return status or 0


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split())
