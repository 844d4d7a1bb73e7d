"""The hopsim command: simulate, run, platforms, topology, validate, calibrate.

Any bad input ends with one line on stderr naming the problem and exit status 2, with
no traceback and no output file left behind.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys

from . import workload_flags
from .errors import InputError
from .interrupt import forget_handled_interrupt

EXIT_INPUT = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but its errors are one line like every other input error."""

    def error(self, message):
        self.exit(EXIT_INPUT, f"{self.prog}: error: {message}\n")


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
                   help="required: a preset name (see hopsim platforms) or a platform TOML "
                        "file (keys and units: docs/platforms.md)")
    workload_flags.add(p, ranks_per_node_help="ranks placed on each node, in blocks (default 1; "
                                              "at most the platform's nodes.cores)",
                       reception_default="the platform's host.reception, itself any-source "
                                         "unless the file says otherwise",
                       families=workload_flags.ALL_FAMILIES, seed_type=seed_value,
                       seed_help="random seed, an integer 0..2^64-1 (default 1); or 'ray' with "
                                 "--overlay random: RayPlatform's own random graph and routes")
    p.add_argument("--nodes", type=int, metavar="N",
                   help="run on N nodes of the platform instead of its nodes.count (as a "
                        "scenario's platform_overrides.nodes; default: the platform's)")
    p.add_argument("--transport", choices=("flow", "queue"),
                   help="what moves the bytes: SimGrid's fair-sharing flow model or per-link "
                        "FIFO queues (default: the platform's network.transport; docs/model.md)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (docs/workloads.md) instead of the tool's text")
    p.add_argument("--trace", metavar="FILE.csv",
                   help="also write every transfer (a message, a rendezvous's request or "
                        "answer, one hop) with its dates to FILE.csv (default: no trace; docs/workloads.md, \"Trace\")")


def _run_simulate(args) -> int:
    from . import progress
    from .api import simulate
    from .formats import text

    params = workload_flags.params(args)
    for k in ("reception", "transport", "nodes"):
        if getattr(args, k) is not None:
            params[k] = getattr(args, k)
    if args.nodes is not None:
        from . import bounds
        bounds.check("nodes.count", args.nodes, "--nodes")
    from .outputs import Outputs

    with Outputs() as out:
        trace = None if args.trace is None else out.file(args.trace, "--trace", suffix=".csv")
        with progress.bar("simulate") as tick:
            result = simulate(args.platform, args.workload, ranks=args.ranks,
                              ranks_per_node=args.ranks_per_node, seed=args.seed, progress=tick,
                              trace=trace is not None, **params)
        if trace is not None:
            out.text(trace, result.trace_csv())
    sys.stdout.write(result.to_json() + "\n" if args.json else text(result))
    return 0


def _add_run(sub):
    p = sub.add_parser("run", help="run a scenario (default: the embedded one)",
                       description="Run every point of a scenario, print one table and write "
                                   "results.json and results.csv into --out.")
    p.add_argument("scenario", nargs="?", metavar="SCENARIO",
                   help="a scenario TOML file, the name of a reproduction of a published "
                        "study (hopsim run --list), or of a packaged scenario (default, "
                        "overlays, degree_sweep); default: the packaged default scenario")
    p.add_argument("--out", metavar="DIR",
                   help="folder for results.json and results.csv (a reproduction adds its "
                        "CSV tables, PNG figures and report.html), created if missing "
                        "(default ./out; for a reproduction ./reproduction-NAME)")
    p.add_argument("--list", action="store_true",
                   help="list the reproductions of published studies and exit")
    p.add_argument("--seed", type=int, metavar="N",
                   help="a reproduction's random seed, 0..2^63-1 (default 1); the same seed "
                        "writes byte-identical files")
    p.add_argument("--quick", action="store_true",
                   help="a reproduction's smaller version (fewer ranks and points; same code "
                        "path), as the tests run it")
    p.add_argument("--plot", metavar="FILE.png",
                   help="also draw the scenario's figure (overlay comparisons and degree "
                        "sweeps) into this PNG file (default: no figure)")
    p.add_argument("--jobs", type=int, metavar="J",
                   help="points run at once, in as many worker processes (default: this "
                        "machine's cores); fewer when their estimated memory does not fit")
    p.add_argument("--dask", metavar="tcp://HOST:PORT",
                   help="run the points on an existing Dask distributed scheduler (its "
                        "workers need the same hopsim version; docs/scenarios.md); default: "
                        "on this machine")
    p.add_argument("--yes", action="store_true",
                   help="run a sweep estimated above an hour (refused without it)")


def _run_run(args) -> int:
    from .scenarios import cli_run
    return cli_run.run(args)


def _add_platforms(sub):
    p = sub.add_parser("platforms", help="list the built-in platform presets, or export one "
                                         "for SimGrid",
                       description="Without arguments: list the built-in presets, one line "
                                   "each (nodes x cores, latency in us, bandwidth in Gbit/s, "
                                   "reception). 'hopsim platforms export NAME_OR_FILE' writes "
                                   "the platform as a SimGrid platform XML plus the SMPI --cfg "
                                   "flags that give hopsim's network contract "
                                   "(docs/platforms.md, docs/live.md).")
    from .platforms import export
    export.add_export_arguments(p)  # hopsim platforms export P --format simgrid-xml


def _run_platforms(args) -> int:
    from . import platforms
    if args.action == "export":
        from .platforms import export
        return export.run_export(args)
    given = [flag for flag, value in (("--out", args.out), ("--format", args.format))
             if value is not None]
    if given:
        raise InputError(f"platforms: {given[0]} applies to 'platforms export' only")
    if args.action == "show":
        if args.platform is None:
            raise InputError("platforms show: name a platform (a preset or a TOML file)")
        sys.stdout.write(platforms.show(args.platform))
        return 0
    if args.platform is not None:
        raise InputError(f"platforms: {args.platform!r} given without 'show' or 'export'")

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
        return lambda args: topology_cli.run(_bounded_topology(args))
    sub.add_parser("topology", help="overlay topologies: statistics, Ray files, plots",
                   add_help=False)
    return None


def _bounded_topology(args):
    from . import bounds

    # Below 1 the overlay family names its own rule; the bounds add the upper limits.
    if args.ranks >= 1:
        bounds.check("topology.ranks", args.ranks, "--ranks")
    if args.degree >= 0:
        bounds.check("degree", args.degree, "--degree")
    if isinstance(args.seed, int):  # a named seed (a string) is the family's to check
        bounds.check("seed", args.seed, "--seed")
    return args


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("hopsim")
    except PackageNotFoundError:
        return "unknown (not installed)"


class _Unavailable(RuntimeError):
    """A part of hopsim this installation lacks (not the user's fault: exit 1)."""


def build_parser(argv: list[str]):
    parser = _Parser(prog="hopsim", description="Discrete-event simulation of MPI traffic "
                                                "on SimGrid. Times are in microseconds (us), "
                                                "sizes in bytes, rates in Gbit/s; "
                                                "'hopsim COMMAND --help' describes each "
                                                "command's options.",
                     epilog="Documentation: docs/ in the source repository (model.md, "
                            "workloads.md, overlays.md, platforms.md, live.md, "
                            "calibration.md, validation.md).")
    parser.add_argument("--version", action="version", version=f"hopsim {_version()}")
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
    from .live import mpirun, smpi
    runners.update(live=mpirun.add_parser(sub), smpi=smpi.add_parser(sub))
    # hopsim.topologies (networkx, matplotlib) is imported only when advise runs.
    if argv[:1] == ["advise"]:
        from .topologies import advise_cli
        runners["advise"] = advise_cli.add_parser(sub)
    else:
        sub.add_parser("advise", help="recommend a routing overlay for N ranks on a platform",
                       add_help=False)
    return parser, runners


def _stop(signum, frame):
    # SIGTERM and SIGHUP stop a command as Ctrl-C does, through the same clean-up paths
    # (the forked simulation is killed, partial outputs removed, namespaces torn down).
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    closed = _reopen_closed_std()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _stop)
    try:
        parser, runners = build_parser(argv)
        args = parser.parse_args(argv)
        if closed:
            raise InputError(f"standard {closed[0]} is closed (hopsim ... >&- ?); nothing was run")
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
        _drop_stdout()
        return 0
    except KeyboardInterrupt:
        return _interrupted()
    except OSError as e:
        if _caused_by_interrupt(e):
            return _interrupted()
        # Inputs raise InputError; what is left is the system refusing our own output
        # (stdout on a full disk or /dev/full has no file name) or a file we touch.
        _drop_stdout()
        where = f"{e.filename}: " if e.filename else "cannot write the output: "
        sys.stderr.write(f"hopsim: error: {where}{e.strerror or e}\n")
        return EXIT_INPUT
    except Exception as e:
        # Python 3.11 wraps what a class body's __set_name__ raises in a RuntimeError: a ^C
        # landing in the first import of matplotlib arrives as one (a CI run saw it).
        if _caused_by_interrupt(e):
            return _interrupted()
        raise
    return status or 0


def _caused_by_interrupt(e: BaseException) -> bool:
    seen = set()
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False


def _interrupted() -> int:
    # A second ^C or a hangup while the first is reported would escape here, and the
    # interpreter would then die by SIGINT (status -2) instead of returning 130.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    _drop_stdout()  # what was buffered for a terminal is not flushed after "interrupted"
    forget_handled_interrupt()
    sys.stderr.write("hopsim: interrupted\n")
    return 130


def _reopen_closed_std() -> list[str]:
    """Closed standard streams ("hopsim ... >&-"), pointed at /dev/null so that no file
    hopsim opens takes their descriptor; their names. A command with a closed stdout is
    refused (its output would be lost), after --help and --version have had their say."""
    closed = []
    for fd, name in ((1, "output"), (2, "error"), (0, "input")):
        try:
            os.fstat(fd)
        except OSError:
            devnull = os.open(os.devnull, os.O_RDWR)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
            closed.append(name)
    if "output" in closed:
        sys.stdout = open(1, "w", closefd=False)
    if "error" in closed:
        sys.stderr = open(2, "w", closefd=False)
    return [c for c in closed if c == "output"]


def _drop_stdout():
    # Whatever is still buffered must not be flushed (again) at exit.
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split())
