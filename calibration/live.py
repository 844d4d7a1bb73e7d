"""`hopsim live`: run a workload with real Open MPI and get simulate's JSON shape back.

run_live() is the programmatic entry (calibration uses it); add_parser()/run() are the
CLI. hopbench (calibration/hopbench) runs the workloads; --tool runs a third-party
benchmark instead. --emulate-cluster H builds H hosts on this machine
(hopsim.calibration.cluster) and removes them whatever happens.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import time
from contextlib import ExitStack
from pathlib import Path

from ..errors import InputError
from ..workload import make_workload
from . import live_result, live_routes
from .. import workload_flags  # the same flags as simulate

TOOLS = ("hopbench", "netpipe", "imb", "osu", "latency_checker")
_TOOL_BINARY = {"netpipe": "NPopenmpi", "imb": "IMB-MPI1", "osu": "osu_latency",
                "latency_checker": "latency_checker"}
# OSU has one program per test.
_OSU_BINARY = {"pingpong": "osu_latency", "bandwidth": "osu_bw"}
# IMB-MPI1's benchmark of each workload.
_IMB_BENCHMARK = {"pingpong": "PingPong", "exchange": "Exchange", "pingping": "PingPing",
                  "sendrecv": "Sendrecv", "alltoall": "Alltoall", "allreduce": "Allreduce",
                  "allgather": "Allgather", "bcast": "Bcast", "reduce": "Reduce",
                  "barrier": "Barrier"}
# Workloads each third-party tool measures.
_TOOL_WORKLOADS = {"hopbench": ("pingpong", "roundtrip", "exchange"), "netpipe": ("pingpong",),
                   "osu": tuple(_OSU_BINARY), "imb": tuple(_IMB_BENCHMARK),
                   "latency_checker": ("roundtrip",)}
# Busy-polling by construction: their pass loop spins on MPI_Iprobe. The others block in
# MPI calls, which yield the core while waiting once mpi_yield_when_idle is set.
_POLLING_WORKLOADS = ("roundtrip",)


class LiveError(InputError):
    """A live run that could not complete (one line; the CLI exits 2)."""


def hopbench_path() -> Path:
    return Path(__file__).resolve().parent / "hopbench" / "hopbench"


def _find_tool(tool: str, tool_path: str | None, workload: str = "pingpong") -> str:
    if tool == "hopbench":
        path = Path(tool_path) if tool_path else hopbench_path()
        if not path.is_file():
            raise InputError("hopbench was not built (no MPI C compiler when hopsim was installed); "
                             "install Open MPI (libopenmpi-dev) and reinstall hopsim")
        return str(path)
    name = _OSU_BINARY[workload] if tool == "osu" else _TOOL_BINARY[tool]
    if tool_path:
        if not (Path(tool_path).is_file() and os.access(tool_path, os.X_OK)):
            raise InputError(f"--tool-path: {tool_path} is not an executable file")
        return str(Path(tool_path).resolve())
    found = shutil.which(name)
    if found is None:
        raise InputError(f"--tool {tool}: {name} is not on PATH; give it with --tool-path")
    return found


def _max_size(work) -> int:
    return max(work.sizes) if work.sizes else 4194304


def tool_arguments(tool: str, work, raw_dir: Path) -> list[str]:
    """The benchmark's arguments that make its output comparable to hopsim's."""
    if tool == "hopbench":
        args = [work.kind]
        if work.kind in ("pingpong", "exchange"):
            args += ["--sizes", ",".join(map(str, work.sizes))]
            if work.iterations:
                args += ["--iterations", str(work.iterations)]
            if work.repetitions:
                args += ["--repetitions", str(work.repetitions)]
        else:
            args += ["--request-bytes", str(work.request_bytes), "--reply-bytes",
                     str(work.reply_bytes), "--exchanges", str(work.exchanges),
                     "--destinations", work.destinations, "--seed", str(work.seed)]
        return args
    if tool == "netpipe":
        return ["-o", str(raw_dir / "np.out"), "-u", str(max(_max_size(work), 1))]
    if tool == "osu":
        args = ["-m", f"{min(work.sizes)}:{_max_size(work)}"]
        if work.kind == "bandwidth":  # osu_bw's -i (windows per size) and -W (its window)
            args += ["-W", str(work.window)] + (["-i", str(work.iterations)] if work.iterations else [])
        return args
    if tool == "imb":
        return [_IMB_BENCHMARK[work.kind], "-npmin", str(work.ranks),
                "-msglog", f"0:{max(_max_size(work), 1).bit_length() - 1}"]
    return ["-message-size", str(work.request_bytes), "-exchanges", str(work.exchanges)]


def run_live(workload: str, ranks: int, ranks_per_node: int = 1, *, tool: str = "hopbench",
             tool_path: str | None = None, hostfile: str | None = None,
             emulate_cluster: int | None = None, link_rate: str | None = None,
             burst: int | None = None, out: str | None = None, timeout: float = 600,
             oversubscribe: bool = False, seed: int = 1, reception: str | None = None,
             progress=None, **params) -> tuple[dict, str]:
    """Run one workload live. Returns (the JSON dict, the tool's text output) and, with
    `out`, writes result.json, the raw output and the mpirun command into that folder.

    Parameters are those of hopsim.simulate (sizes, iterations, repetitions,
    request_bytes, reply_bytes, exchanges, destinations, overlay, degree; reception).
    Raises InputError (one line) on bad input or a failed run; KeyboardInterrupt
    (also on SIGTERM under the CLI) after everything was torn down.
    """
    if tool not in TOOLS:
        raise InputError(f"--tool: must be one of {', '.join(TOOLS)}, got {tool!r}")
    work = make_workload(workload, ranks, ranks_per_node, seed, **params)
    if workload not in _TOOL_WORKLOADS[tool]:
        raise InputError(f"--tool {tool} measures {', '.join(_TOOL_WORKLOADS[tool])}, not {workload}")
    if work.algorithm:
        # A live Open MPI picks its own collective algorithms (coll/tuned's rules).
        raise InputError("--algorithm applies to simulate: a live run uses Open MPI's own choice")
    if reception not in (None, "any-source", "round-robin"):
        raise InputError(f"reception: must be any-source or round-robin, got {reception!r}")
    if tool != "hopbench" and (work.overlay or reception == "round-robin"):
        raise InputError(f"--tool {tool}: overlays and round-robin reception need hopbench")
    if hostfile is not None and emulate_cluster is not None:
        raise InputError("--hostfile and --emulate-cluster exclude each other")
    if emulate_cluster is not None and link_rate is None:
        raise InputError("--emulate-cluster needs --link-rate (e.g. 200mbit)")
    if emulate_cluster is None and (link_rate is not None or burst is not None):
        raise InputError("--link-rate and --burst apply to --emulate-cluster")
    if hostfile is not None and not Path(hostfile).is_file():
        raise InputError(f"--hostfile: {hostfile} does not exist")
    if timeout is None or timeout <= 0:
        raise InputError(f"--timeout: must be > 0 seconds, got {timeout}")
    if emulate_cluster is not None:
        from .cluster import EmulatedCluster, check_available
        check_available()
        if work.nodes_used > emulate_cluster:
            raise InputError(f"--ranks: {ranks} ranks at {ranks_per_node} per host need "
                             f"{work.nodes_used} hosts; --emulate-cluster gives {emulate_cluster}")
    binary = _find_tool(tool, tool_path, workload)
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        raise InputError("mpirun is not on PATH: live runs need Open MPI (openmpi-bin)")
    cores = os.cpu_count() or 1
    local_ranks = ranks if hostfile is None else ranks_per_node
    crowded = local_ranks > cores
    if crowded and workload in _POLLING_WORKLOADS and not oversubscribe:
        raise InputError(f"--ranks: {local_ranks} busy-polling ranks on {cores} cores would "
                         f"measure the scheduler, not the network; give --oversubscribe to run anyway")
    out_dir = Path(out) if out is not None else None
    if out_dir is not None and out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"--out: {out} exists and is not a folder")

    with ExitStack() as stack:
        import tempfile
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hopsim-live-")))
        args = tool_arguments(tool, work, scratch)
        if work.overlay:
            routes = live_routes.write(scratch / "routes.txt", params["overlay"], ranks,
                                       params.get("degree"), seed)
            args += ["--routes", str(routes)]
        if tool == "hopbench" and workload == "roundtrip" and reception:
            args += ["--reception", reception]
        cmd = [mpirun, "-np", str(ranks)]
        if crowded or oversubscribe:
            cmd += ["--oversubscribe", "--mca", "mpi_yield_when_idle", "1"]
        cluster = None
        if emulate_cluster is not None:
            cluster = stack.enter_context(EmulatedCluster(emulate_cluster, link_rate, burst))
            if progress:
                progress(f"emulated cluster {cluster.tag}: {emulate_cluster} hosts on "
                         f"{cluster.subnet}, links {link_rate} (burst {cluster.burst} B)")
            cmd += cluster.mpirun_args()
            cmd += ["--hostfile", str(cluster.hostfile(ranks_per_node)),
                    "--map-by", f"ppr:{ranks_per_node}:node"]
        elif hostfile is not None:
            cmd += ["--hostfile", str(Path(hostfile).resolve()), "--map-by", f"ppr:{ranks_per_node}:node"]
        cmd += [binary] + args
        stdout, stderr, wall = _mpirun(cmd, timeout, stack)
        raw_files = {}
        if tool == "netpipe" and (scratch / "np.out").is_file():
            raw_files["np.out"] = (scratch / "np.out").read_text()
        if work.overlay:
            raw_files["routes.txt"] = (scratch / "routes.txt").read_text()
        live = {"tool": tool, "mpirun": shlex.join(cmd), "hosts": emulate_cluster or hostfile or "localhost",
                "link_rate": link_rate, "burst_bytes": cluster.burst if cluster else None,
                "oversubscribed": crowded, "cores": cores}
        platform = (f"live:emulated-{emulate_cluster}x{link_rate}" if emulate_cluster is not None
                    else f"live:{Path(hostfile).name if hostfile else 'localhost'}")
        parameters = work.parameters()
        parameters["reception"] = reception or "any-source"
        text, result = _interpret(tool, stdout, raw_files, work, platform, parameters, wall, live)
    if out_dir is not None:
        _write_outputs(out_dir, tool, cmd, stdout, stderr, raw_files, result, text)
    return result, text


def _mpirun(cmd: list[str], timeout: float, stack: ExitStack) -> tuple[str, str, float]:
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)
    # Whatever ends this block, mpirun's process group goes first (then the cluster).
    stack.callback(_kill_group, proc)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise LiveError(f"the live run exceeded --timeout {timeout:g} s and was killed") from None
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        tail = " | ".join(line.strip() for line in (stderr or stdout).strip().splitlines()[-3:])
        raise LiveError(f"mpirun failed with status {proc.returncode}: {tail[:300]}")
    return stdout, stderr, wall


def _kill_group(proc: subprocess.Popen):
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _interpret(tool, stdout, raw_files, work, platform, parameters, wall, live):
    from ..formats import text as tool_text

    if tool == "hopbench":
        raw = live_result.parse_raw(stdout)
        result = live_result.to_result(raw, platform=platform, ranks_per_node=work.ranks_per_node,
                                       seed=work.seed, parameters=parameters, wall_seconds=wall)
        live["host_names"] = [raw["hosts"].get(r, "") for r in range(raw["ranks"])]
        text = tool_text(result)
        if work.kind == "roundtrip":
            from ..formats import ray_network_test
            raw_files["NetworkTest.txt"] = ray_network_test(result)
        return text, live_result.result_dict(result, live)
    # Third-party tools: their own text; the figures are read back only for NetPIPE
    # (the other parsers belong to hopsim's calibration readers).
    out = {"platform": platform, "workload": work.kind, "ranks": work.ranks,
           "ranks_per_node": work.ranks_per_node, "seed": work.seed, "simulated_seconds": None,
           "wall_seconds": wall, "messages": None, "results": None,
           "parameters": parameters, "live": live}
    if tool == "netpipe" and "np.out" in raw_files:
        # Read by the calibration parser (one reader of NetPIPE's format), in the shape of
        # simulate's pingpong rows; MB/s in 10^6 bytes like hopsim's own (NetPIPE's Mbps
        # column is in 2^20 bits per second).
        from .parsers import parse_text

        rows = [{"bytes": m.size, "latency_us": m.value,
                 "bandwidth_mbytes_per_sec": m.size / m.value if m.value > 0 else 0.0}
                for m in parse_text(raw_files["np.out"], "np.out", "netpipe")
                if m.statistic == "latency_us"]
        out["results"] = {"rows": rows}
    if tool in ("osu", "imb"):
        out["results"] = {"rows": _tool_rows(tool, stdout, work)}
    if tool == "latency_checker":
        out["results"] = _latency_checker_results(stdout)
    return (raw_files.get("np.out") or stdout), out


# simulate's row keys for what the OSU and IMB parsers read (statistic -> row key).
_ROW_KEYS = {"latency_us": "latency_us", "t_us": "t_us", "t_min_us": "t_min_us",
             "t_max_us": "t_max_us", "t_avg_us": "t_avg_us", "mbytes_per_sec": "mbytes_per_sec",
             "bandwidth_mbytes_per_sec": "bandwidth_mbytes_per_sec"}


def _latency_checker_results(stdout: str) -> dict:
    """latency_checker's figures read by the calibration parser (one reader of its
    output): the all-rank average of averages under simulate's key, and each rank's mode
    and mean round trip. No single round trip is printed, so no rtt_us."""
    from .parsers import parse_text

    ms = parse_text(stdout, "latency_checker output", "latency_checker")
    per_rank = lambda stat: [m.value for m in sorted((m for m in ms if m.statistic == stat),
                                                     key=lambda m: m.rank)]
    return {"lc_average_of_averages_us": next(m.value for m in ms if m.rank is None),
            "lc_mode_us": per_rank("lc_mode_us"), "lc_mean_us": per_rank("lc_mean_us")}


def _tool_rows(tool: str, stdout: str, work) -> list[dict]:
    """osu_latency's, osu_bw's or IMB's table read by the calibration parsers (one reader
    of each format), in the shape of simulate's rows for the workload."""
    from .parsers import parse_text

    rows: dict[int, dict] = {}
    for m in parse_text(stdout, f"{tool} output", tool):
        if (m.workload != work.kind or m.ranks != work.ranks or m.rank is not None
                or m.statistic not in _ROW_KEYS):
            continue
        row = rows.setdefault(m.size, {"bytes": m.size})
        if m.repetitions is not None:
            row["repetitions"] = m.repetitions
        row[_ROW_KEYS[m.statistic]] = m.value
    out = []
    for size, row in rows.items():
        if work.kind == "pingpong":
            # IMB's PingPong prints t (half the round trip) and its MB/s: osu_latency's
            # latency and bandwidth (10^6 bytes, as simulate's rows).
            latency = row.get("latency_us", row.get("t_us"))
            row = {"bytes": size, "latency_us": latency,
                   "bandwidth_mbytes_per_sec": size / latency if latency else 0.0}
        elif work.kind == "bandwidth":
            bw = row["bandwidth_mbytes_per_sec"]
            # osu_bw does not print its count: None unless -i gave it.
            row = {"bytes": size, "window": work.window, "iterations": work.iterations or None,
                   "window_us": size * work.window / bw if bw > 0 else None,
                   "bandwidth_mbytes_per_sec": bw}
        out.append(row)
    return out


def _write_outputs(out_dir: Path, tool, cmd, stdout, stderr, raw_files, result, text):
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "mpirun.cmd").write_text(shlex.join(cmd) + "\n")
    (out_dir / f"{tool}.stdout").write_text(stdout)
    (out_dir / f"{tool}.stderr").write_text(stderr)
    (out_dir / "output.txt").write_text(text)
    for name, content in raw_files.items():
        (out_dir / name).write_text(content)
    (out_dir / "result.json").write_text(json.dumps(result, indent=1) + "\n")


# -- CLI ---------------------------------------------------------------------------------

def add_parser(sub):
    p = sub.add_parser("live", help="run a workload with real Open MPI (optionally on an "
                                    "emulated cluster)",
                       description="Run a workload live (hopbench or a third-party benchmark) "
                                   "and print the tool's output and one JSON object in "
                                   "simulate's shape. docs/live.md.")
    workload_flags.add(p, ranks_per_node_help="ranks per host with --hostfile or "
                                              "--emulate-cluster (default 1)",
                       reception_default="any-source (hopbench's loop)",
                       families=workload_flags.TABLE_FAMILIES)
    p.add_argument("--hostfile", metavar="FILE",
                   help="an Open MPI hostfile of a real cluster (default: every rank on this "
                        "machine)")
    p.add_argument("--emulate-cluster", type=int, metavar="H",
                   help="build H hosts on this machine: network namespaces, a bridge, tbf "
                        "link caps; needs root and --link-rate (default: no emulated cluster)")
    p.add_argument("--link-rate", metavar="RATE",
                   help="with --emulate-cluster: tbf cap of each host link in tc's syntax, "
                        "e.g. 200mbit or 1gbit (required there; no default)")
    p.add_argument("--burst", type=int, metavar="BYTES",
                   help="with --emulate-cluster: tbf burst in bytes, at least 1500 (default "
                        "10 ms of traffic at --link-rate, at least 16 KiB)")
    p.add_argument("--tool", choices=TOOLS, default="hopbench",
                   help="the benchmark to run (default hopbench; the others are the "
                        "installed third-party binaries)")
    p.add_argument("--tool-path", metavar="PATH",
                   help="the tool's binary (default: hopbench as installed with hopsim, the "
                        "others found on PATH)")
    p.add_argument("--out", metavar="DIR",
                   help="write result.json, the raw output and the mpirun command into DIR "
                        "(default: nothing written)")
    p.add_argument("--json", action="store_true", help="print only the JSON object")
    p.add_argument("--timeout", type=float, default=600, metavar="S",
                   help="kill the run after S seconds (default 600)")
    p.add_argument("--oversubscribe", action="store_true",
                   help="allow more busy-polling ranks than cores (numbers then measure the scheduler)")
    return run


def run(args) -> int:
    import sys

    params = workload_flags.params(args)
    progress = (lambda msg: sys.stderr.write(f"hopsim live: {msg}\n")) if not args.json else None
    result, text = run_live(args.workload, args.ranks, args.ranks_per_node, tool=args.tool,
                            tool_path=args.tool_path, hostfile=args.hostfile,
                            emulate_cluster=args.emulate_cluster, link_rate=args.link_rate,
                            burst=args.burst, out=args.out, timeout=args.timeout,
                            oversubscribe=args.oversubscribe, seed=args.seed,
                            reception=args.reception, progress=progress, **params)
    if not args.json:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.write(json.dumps(result) + "\n")
    return 0
