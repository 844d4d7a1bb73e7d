"""`hopsim validate` and `hopsim calibrate`: parsers and runners (registered in hopsim.cli)."""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from .. import bounds
from ..errors import InputError
from ..platforms.platform import OPEN_MPI_TCP_EAGER_LIMIT

# The live ping-pong of `calibrate --live`: a few latency-bound sizes, then powers of two
# and their midpoints from 4 KiB to 1 MiB, so that a burst or protocol break is located
# within half an octave and every segment has four sizes at least.
LIVE_SIZES = [0, 64, 1024] + sorted({2**k for k in range(12, 21)} | {3 * 2**k for k in range(11, 19)})
LIVE_ITERATIONS = 100
# The SMPI --cfg flags file beside a platform's XML (calibrate and platforms export alike).
from ..platforms.simgrid import SMPI_SUFFIX  # noqa: E402 (beside the other constants)


def _placement(p):
    p.add_argument("--nodes", type=bounds.flag("nodes"), metavar="N",
                   help="number of nodes of the platform (default: the platform's "
                        "nodes.count; calibrate without --base: 2)")
    p.add_argument("--ranks-per-node", type=bounds.flag("ranks_per_node"), metavar="K",
                   help="ranks per node in the measured runs, e.g. 2 for a ping-pong inside "
                        "one node (default: what the file says, else 1)")
    from .. import workload_flags
    workload_flags.add_placement(p, "how the measured runs placed ranks on nodes, for files "
                                    "that do not record it (IMB, OSU, NetPIPE, latency_checker, "
                                    "Ray; a hopsim or live JSON keeps its own): block, cyclic, "
                                    "a rankfile, or a hostfile as --map-by slot (FILE, "
                                    "block:FILE) or node (cyclic:FILE); default block")


def _jobs(p):
    p.add_argument("--jobs", type=bounds.flag("jobs"), metavar="J",
                   help="simulations at once, each in its own process (default: one per "
                        "core this process may use); the results are the same for any J")


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
    p.add_argument("--seed", type=bounds.flag("seed"), default=1, metavar="S",
                   help="random seed of the simulations, an integer 0..2^64-1 (default 1)")
    p.add_argument("--machine-cores", type=bounds.flag("nodes.machine_cores"), metavar="N",
                   help="the files were measured on one machine of N cores (an emulated "
                        "cluster): mark the latency-bound cases with more ranks than N as not "
                        "counted (the scheduler's time) and summarise the rest, per file too "
                        "(default: the platform's nodes.machine_cores; none: every case "
                        "counts); it changes no simulation")
    p.add_argument("--pingpong", nargs="+", metavar="FILE",
                   help="with --machine-cores: the 2-host ping-pong measured beside FILES "
                        "(IMB PingPong, osu_latency, NetPIPE; read, not validated), whose "
                        "half-performance length decides whether a run of one size "
                        "(latency_checker) is latency-bound (default: a ping-pong among "
                        "FILES)")
    _jobs(p)


def run_validate(args) -> int:
    from . import plots, replay_jobs
    from .validate import validate
    from .. import progress
    from ..outputs import Outputs

    replay_jobs.set_jobs(args.jobs)

    with Outputs() as outputs:
        plot = outputs.file(args.plot, "--plot", ".png") if args.plot is not None else None
        with progress.bar("validate") as tick:
            report = validate(args.platform, args.files, nodes=args.nodes,
                              ranks_per_node=args.ranks_per_node, seed=args.seed,
                              placement=args.placement, progress=tick,
                              machine_cores=args.machine_cores, pingpong=args.pingpong)
        if plot is not None:
            outputs.write(plot, lambda tmp: plots.validation_plot(report, tmp))
    sys.stdout.write(json.dumps(report.to_dict()) + "\n" if args.json else report.table())
    if args.plot and not args.json:
        sys.stdout.write(f"wrote {args.plot}\n")
    return 0


def add_calibrate(sub):
    p = sub.add_parser("calibrate", help="fit a platform to measurements",
                       description="Fit a platform's network and host parameters to FILES; "
                                   "write it with the provenance of every number, plus the "
                                   "SimGrid platform XML and SMPI flags beside it.")
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="measurement files, or none with --live (osu_latency, IMB, NetPIPE, "
                        "latency_checker, Ray, hopsim JSON; docs/calibration.md)")
    _placement(p)
    live = p.add_argument_group("measure first (instead of FILES)")
    live.add_argument("--live", action="store_true",
                      help="run a two-host ping-pong live, keep its outputs next to --out, fit it")
    live.add_argument("--emulate-cluster", type=bounds.flag("emulate_cluster"), metavar="H",
                      help="with --live: emulate H hosts on this machine in network namespaces (needs root; "
                            "docs/live.md; default: none, run on this machine or --hostfile)")
    live.add_argument("--link-rate", metavar="RATE", help="with --live and --emulate-cluster: each host link's tbf cap in tc's syntax, e.g. 200mbit "
                            "or 1gbit, or none for no tbf (required there; no default)")
    live.add_argument("--burst", type=bounds.flag("burst"), metavar="BYTES", help="with --live: the tbf burst in bytes (default: 10 ms of traffic at --link-rate, "
                            "at least 16 KiB)")
    live.add_argument("--congestion-control", metavar="NAME",
                      help="with --live and --emulate-cluster: the hosts' TCP congestion control "
                           "(e.g. cubic, bbr; default: this machine's)")
    live.add_argument("--hostfile", metavar="FILE", help="with --live: a real cluster's Open MPI hostfile (default: none)")
    live.add_argument("--tool", choices=("hopbench", "netpipe"),
                      help="with --live: the ping-pong program (default hopbench; NetPIPE's np.out is fitted "
                            "as is)")
    live.add_argument("--sizes", metavar="0,1,...", help="with --live: message sizes "
                      "in bytes (default: 0, 64, 1024, then powers of two and their midpoints from 4 KiB "
                       "to 1 MiB)")
    live.add_argument("--iterations", type=bounds.flag("live_iterations"), metavar="N",
                      help=f"with --live: timed round trips per size (default {LIVE_ITERATIONS})")
    live.add_argument("--campaign", action="store_true",
                      help="with --live: measure the campaign instead of one ping-pong: ping-pong "
                           "trials, a one-node ping-pong, osu_bw, 2-host exchanges at 1 and 2 "
                           "ranks per host, 0-byte round trips at 2 ranks per host, a linear "
                           "bcast and reduce over the hosts, on 3+ hosts a "
                           "pairwise alltoall over all of them "
                           "(--emulate-cluster 2..4 or --hostfile; docs/calibration.md)")
    live.add_argument("--tools", metavar="DIR",
                      help="with --campaign: the folder holding osu_bw and IMB-MPI1 "
                           "(default: found on PATH)")
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
    joint = p.add_argument_group("joint fit and cross-validation (docs/calibration.md)")
    joint.add_argument("--closed-form", action="store_true",
                       help="only the closed-form fitters, no joint fit with the engine in the "
                            "loop (default: the joint fit runs after them)")
    joint.add_argument("--holdout", nargs="+", metavar="FILE",
                       help="fit on FILES without these, then print measured vs predicted for "
                            "them (default: none)")
    joint.add_argument("--leave-one-out", action="store_true",
                       help="fit on all FILES but one, predict that one, for each file in turn; "
                            "print the table, then fit on all (default: off)")
    joint.add_argument("--hold", metavar="KEY[,KEY...]",
                       help="keep these --base values out of the joint fit (a vendor "
                            "specification the data must not move), e.g. "
                            "network.bandwidth_gbps (default: none held)")
    joint.add_argument("--eager-limit", type=bounds.flag("eager_limit"), metavar="BYTES",
                       help="the MPI's eager limit between nodes in bytes of data, when known "
                            f"(Open MPI over TCP: {OPEN_MPI_TCP_EAGER_LIMIT}, btl_tcp_eager_limit's 64 KiB less "
                            "ob1's header): the only rendezvous threshold the fit weighs "
                            "against eager-only (default: with --live --emulate-cluster, Open "
                            "MPI's TCP limit, since hopsim runs it; else screened from the files)")
    joint.add_argument("--machine-cores", type=bounds.flag("nodes.machine_cores"), metavar="N",
                       help="every measured node ran on one machine of N cores (an emulated "
                            "cluster): the platform says so (nodes.machine_cores), and round "
                            "trips with more ranks than N fit the machine's turn "
                            "(host.turn_us) and nothing else (default: none, each node its "
                            "own cores)")
    joint.add_argument("--machine-gbps", metavar="X|FILE[,FILE...]",
                       help="every measured node ran on one machine that moves at most X "
                            "Gbit/s between them (an emulated cluster's packet processing, a "
                            "shared switch in effect), or hopsim live results of an exchange "
                            "on its uncapped links that measured it: the platform's backbone "
                            "(network.backbone_gbps), applied to the fit, not fitted "
                            "(default: none, the nodes share nothing)")
    joint.add_argument("--fit-iterations", type=bounds.flag("fit_iterations"), metavar="N",
                       help="iterations (repetitions, round trips per rank) per case at most "
                            "while fitting jointly (default: the joint fit's budget, 300)")
    _jobs(joint)


def run_calibrate(args) -> int:
    from ..outputs import safe_name
    from . import replay_jobs

    replay_jobs.set_jobs(args.jobs)

    if args.out == "":
        raise InputError("--out: expected a .toml file name, got an empty string")
    out = Path(args.out)
    if out.suffix != ".toml":
        raise InputError(f"--out: expected a .toml file name, got {args.out!r}")
    if not out.parent.is_dir():
        raise InputError(f"--out: folder {str(out.parent)!r} does not exist")
    name = safe_name(args.name, "--name") if args.name is not None else out.stem
    files = list(args.files)
    live_opts = [f"--{k.replace('_', '-')}" for k in ("emulate_cluster", "link_rate", "burst",
                                                       "hostfile", "tool", "iterations",
                                                       "congestion_control")
                 if getattr(args, k) is not None] + (["--sizes"] if args.sizes else [])
    if not args.live and (live_opts or args.campaign):
        raise InputError(f"{(live_opts or ['--campaign'])[0]} applies to --live only")
    if args.tools is not None and not args.campaign:
        raise InputError("--tools applies to --live --campaign only")
    if args.campaign:
        own = [o for o in live_opts if o in ("--tool", "--iterations", "--sizes")]
        if own:
            raise InputError(f"{own[0]}: the campaign chooses its own tools, sizes and counts")
        if args.emulate_cluster is None and args.hostfile is None:
            raise InputError("--campaign needs 2 to 4 hosts: --emulate-cluster H or --hostfile FILE")
    if args.congestion_control is not None and args.emulate_cluster is None:
        raise InputError("--congestion-control applies to the cluster --emulate-cluster builds")
    if args.congestion_control is not None:
        from ..live.cluster import check_congestion_control

        check_congestion_control(args.congestion_control)
    if args.live and args.emulate_cluster is not None and args.link_rate is None:
        # Checked here, before anything is measured or printed (live checks it too, later).
        raise InputError("--emulate-cluster needs --link-rate (e.g. 200mbit, or none for no tbf)")
    if args.live and files:
        raise InputError("--live measures its own ping-pong; give FILES or --live, not both")
    if not args.live and not files:
        raise InputError("give measurement FILES, or --live to measure a ping-pong first")
    if args.closed_form and (args.holdout or args.leave_one_out or args.fit_iterations
                             or args.eager_limit is not None or args.machine_cores is not None):
        raise InputError("--closed-form: --holdout, --leave-one-out, --fit-iterations, "
                         "--eager-limit and --machine-cores need the joint fit")
    if args.holdout and args.leave_one_out:
        raise InputError("--holdout or --leave-one-out, not both")
    if args.leave_one_out and len(files) < 2:
        raise InputError("--leave-one-out needs two FILES at least")
    from .machine_capacity import parse as parse_machine

    # Read now, not after minutes of fitting: a bad file is a one-line error first.
    args.machine = parse_machine(args.machine_gbps) if args.machine_gbps is not None else None
    made: list[Path] = []   # the campaign's measurements, removed if the command fails
    try:
        _calibrate(args, out, name, files, made)
    except BaseException:
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return 0


def _calibrate(args, out, name, files, made) -> None:
    from . import plots
    from ..outputs import Outputs, target
    from .calibrate import possible_slugs
    from .holdout import check, split
    from .joint import FIT_CAP

    with Outputs() as outputs:
        # Every target and held-out file is checked before the (possibly long) live run
        # and the fit.
        toml = outputs.file(out, "--out")
        xml = outputs.file(out.with_suffix(".xml"), "--out (its .xml)")
        cfg = outputs.file(out.with_suffix(SMPI_SUFFIX), f"--out (its {SMPI_SUFFIX})")
        plot = outputs.file(args.plot, "--plot", ".png") if args.plot is not None else None
        for slug in possible_slugs():
            # Which runner-ups the fit writes is known only after it: each name it could
            # write is checked now, not minutes later.
            target(alternative_path(out, slug), ALTERNATIVE_FLAG)
        if args.holdout:
            check(args.holdout, args.ranks_per_node, args.placement)
        checks = []
        if args.live and args.campaign:
            files, hosts, checks = measure_campaign(args, out, made)
            if args.nodes is None:
                args.nodes = hosts
        elif args.live:
            files = [measure_live(args, out)]
        fit_files = split(files, args.holdout) if args.holdout else files
        kw = dict(base=args.base, nodes=args.nodes, ranks_per_node=args.ranks_per_node,
                  placement=args.placement, hold=_hold(args.hold),
                  **eager_limit_of(args, os.environ), machine_cores=args.machine_cores,
                  machine=args.machine,
                  joint=not args.closed_form, cap=args.fit_iterations or FIT_CAP,
                  progress=lambda m: sys.stderr.write(f"hopsim calibrate: {m}\n"))
        result = _fit(fit_files, name=name, argv=sys.argv[1:], holdout=args.holdout,
                      checks=checks, leave_one_out=_cross_validate(args, files, kw), **kw)
        outputs.text(toml, result.toml)
        outputs.text(xml, result.simgrid_xml)
        outputs.text(cfg, result.smpi_flags)
        alternatives = [alternative_path(out, slug) for slug, _ in result.alternatives]
        for path, (_, text) in zip(alternatives, result.alternatives):
            outputs.text(outputs.file(path, ALTERNATIVE_FLAG), text)
        if plot is not None:
            outputs.write(plot, lambda tmp: plots.fit_plot(result.fit, result.simulated, tmp))
    for stale in out.parent.glob(f"{out.stem}.undecided-*{out.suffix or '.toml'}"):
        # An earlier fit's runner-up that this fit decided (or no longer weighs) would
        # read as this fit's.
        if stale not in alternatives and stale.read_text(errors="replace").startswith("# Written by: hopsim"):
            stale.unlink()
    sys.stdout.write(result.text)
    sys.stdout.write(f"wrote {out}, {out.with_suffix('.xml')} (SimGrid platform) and "
                     f"{out.with_suffix(SMPI_SUFFIX)} (SMPI --cfg flags)"
                     + (f", {args.plot}" if args.plot else "")
                     + "".join(f", {a}" for a in alternatives) + "\n")


ALTERNATIVE_FLAG = "--out (an undecided alternative beside it)"


def alternative_path(out: Path, slug: str) -> Path:
    """Where the fit with the runner-up of an undecided mechanism goes: beside --out."""
    return out.with_name(f"{out.stem}.undecided-{slug}{out.suffix or '.toml'}")


def eager_limit_of(args, environ) -> dict:
    """calibrate_files' eager_limit and its source: --eager-limit's; else, where hopsim
    itself ran the MPI over TCP (--live on an emulated cluster: Open MPI with the tcp BTL),
    Open MPI's TCP limit, unless an OMPI_MCA_btl_tcp_eager_limit in `environ` changed it;
    else none (screened from the files)."""
    if args.eager_limit is not None:
        return {"eager_limit": args.eager_limit}
    if (args.live and args.emulate_cluster is not None and not args.closed_form
            and "OMPI_MCA_btl_tcp_eager_limit" not in environ):
        return {"eager_limit": OPEN_MPI_TCP_EAGER_LIMIT,
                "eager_limit_from": "Open MPI has it over TCP, which the live runs used "
                                    "between the emulated hosts"}
    return {"eager_limit": None}


def _hold(text):
    return () if text is None else tuple(k.strip() for k in text.split(",") if k.strip())


def _cross_validate(args, files, kw):
    """--leave-one-out: the table of each file predicted by the fit on the others."""
    if not args.leave_one_out:
        return None
    from .calibrate import calibrate_files
    from .holdout import HoldoutTable, predict

    table = HoldoutTable(title="leave one file out (each file predicted by the fit on the others)")
    # A fold's platform takes the machine's capacity as the full fit does, without the
    # full fit's report of what it changes (a simulation of every file twice per fold).
    machine = kw.get("machine")
    fold_kw = {**kw, "machine": None}
    for f in files:
        rest = [g for g in files if g != f]
        kw["progress"](f"leave-one-out: fitting without {f}")
        try:
            fitted = calibrate_files(rest, name="loo", **fold_kw).fit.platform
        except InputError as e:
            table.unfitted.append((f, str(e)))
            continue
        if machine is not None:
            from .machine_capacity import apply

            fitted = apply(fitted, machine)[0]
        table.predictions += predict(fitted, [f], args.ranks_per_node,
                                     placement=args.placement).predictions
    return table


def _fit(files, **kw):
    """calibrate_files, with a numerical failure on degenerate data (a singular system,
    a non-finite residual) reported as the input problem it is, in one line."""
    import numpy as np

    from .calibrate import calibrate_files

    try:
        return calibrate_files(files, **kw)
    except InputError:
        raise
    except (np.linalg.LinAlgError, ZeroDivisionError, FloatingPointError, ValueError) as e:
        raise InputError(f"cannot fit {', '.join(map(str, files))}: the data are degenerate "
                         f"for this fit ({type(e).__name__}: {e})") from None


def measure_live(args, out: Path) -> str:
    """Run the two-host ping-pong (hopsim.live.mpirun.run_live) into OUT's folder as
    <stem>-live/ (result.json, the tool's raw output, the mpirun command); the file to fit."""
    from ..live.mpirun import run_live

    sizes = LIVE_SIZES
    if args.sizes:
        try:
            sizes = [int(x) for x in args.sizes.split(",")]
        except ValueError:
            raise InputError(f"--sizes: expected comma-separated byte counts, got {args.sizes!r}") from None
    raw = out.with_name(out.stem + "-live")
    if raw.exists():
        raise InputError(f"--live: {raw} exists; remove it or choose another --out")
    tool = args.tool or "hopbench"
    iterations = args.iterations or LIVE_ITERATIONS
    if tool == "netpipe" and args.iterations is not None:
        raise InputError("--iterations: NetPIPE chooses its own repetitions; it applies to --tool hopbench")
    params = {"sizes": sizes, "iterations": iterations}
    if tool == "netpipe":
        params = {"sizes": [max(sizes)]}   # NetPIPE chooses its own sizes up to the largest
    sys.stderr.write(f"hopsim calibrate: measuring a {tool} ping-pong on 2 hosts "
                     f"({_where(args)})\n")
    # oversubscribe=True makes the waiting rank yield its core (mpi_yield_when_idle):
    # under a raised priority (nice -n -15) a spinning rank starved the kernel's packet
    # processing and a 0-byte ping-pong took 7.7 ms instead of ~6 us (docs/validation.md).
    run_live("pingpong", 2, 1, tool=tool, hostfile=args.hostfile, oversubscribe=True,
             emulate_cluster=args.emulate_cluster, link_rate=args.link_rate, burst=args.burst,
             congestion_control=args.congestion_control,
             out=str(raw), progress=lambda m: sys.stderr.write(f"hopsim calibrate: {m}\n"), **params)
    return str(raw / ("np.out" if tool == "netpipe" else "result.json"))


def _where(args) -> str:
    """Where a live calibration measures, for its progress line."""
    if args.emulate_cluster:
        rate = args.link_rate
        return f"emulated, {'uncapped' if rate in (None, 'none') else rate}"
    return args.hostfile or "this machine"


def measure_campaign(args, out: Path, made: list) -> tuple[list[str], int, list[str]]:
    """Run the campaign (hopsim.calibration.campaign) into <stem>-live/, one folder per
    probe: measured into a hidden folder beside it, renamed into place when every probe
    ran (an interrupt or a failed probe leaves nothing). Returns (the files to fit, hosts,
    the checks' files: measured, predicted, never fitted)."""
    import os
    import time

    from . import campaign
    from ..reaper import Reaper

    raw = out.with_name(out.stem + "-live")
    if raw.exists():
        raise InputError(f"--live: {raw} exists; remove it or choose another --out")
    if args.hostfile is not None:
        from ..placement import read

        hosts = min(len(read(bounds.read_text(args.hostfile, "--hostfile"), args.hostfile, 1).hosts),
                    campaign.MAX_HOSTS)
    else:
        hosts = args.emulate_cluster
    machine = _machine_plan(args)
    plan = campaign.probes(hosts) + campaign.checks(hosts) + machine
    campaign.tool_paths(args.tools, (p.tool for p in plan))   # every tool found before any run
    partial = raw.with_name(f".{raw.name}.hopsim-{os.getpid()}")
    progress = lambda m: sys.stderr.write(f"hopsim calibrate: {m}\n")
    progress(f"campaign: {len(plan)} live runs on {hosts} hosts "
             f"({_where(args)})")
    start = time.perf_counter()
    with Reaper() as reaper:   # removes the partial folder if hopsim is killed
        reaper.folder(partial)
        made.append(partial)
        partial.mkdir()
        campaign.measure(plan, partial, emulate_cluster=args.emulate_cluster,
                         link_rate=args.link_rate, burst=args.burst, hostfile=args.hostfile,
                         tools_dir=args.tools, prefix=campaign.PREFIX, progress=progress,
                         congestion_control=args.congestion_control)
        partial.rename(raw)
        made[made.index(partial)] = raw
    progress(f"campaign: measured in {time.perf_counter() - start:.0f} s, kept in {raw}/")
    files = lambda held: [str(raw / p.folder / "result.json") for p in plan
                          if p.held_out == held and not p.machine]
    if machine:
        from .machine_capacity import parse

        args.machine = parse(",".join(str(raw / p.folder / "result.json") for p in machine))
    return files(False), hosts, files(True)


def _machine_plan(args) -> list:
    """The machine's probes when the campaign emulates every node on this machine with
    uncapped links (the machine is then what binds the nodes together) and --machine-gbps
    does not already say what it moves. Not under a tbf: there, rig R's links (8 Gbit/s)
    were predicted worse with the capacity the campaign measured (42% median |error|
    against 16% without; docs/calibration.md, "The machine's capacity")."""
    from . import campaign

    if args.emulate_cluster is None or args.link_rate != "none" or args.machine is not None:
        return []
    return campaign.machine_probes()
