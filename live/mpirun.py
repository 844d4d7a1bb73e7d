"""`hopsim live`: run a workload under Open MPI's mpirun and get simulate's JSON shape back.

run_live() is the programmatic entry (calibrate --live and the campaigns of
hopsim.calibration use it); add_parser()/run() are the CLI. hopbench (live/hopbench)
runs the workloads; --tool runs a third-party benchmark instead, whose output is read by
hopsim.calibration.parsers (one reader per format; the only part of calibration that
hopsim.live imports). --emulate-cluster H builds H hosts on this machine
(hopsim.live.cluster) and removes them whatever happens.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

from .. import bounds
from ..errors import InputError
from ..workload import make_workload
from . import result as live_result, routes as live_routes
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
    from ..built import built_path

    return built_path("live", "hopbench", "hopbench")


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
            if work.warmup >= 0:
                args += ["--warmup", str(work.warmup)]
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
            args += ["-W", str(work.window)]
        # -i and -x set both the small and the large messages' counts (osu_util.c).
        args += ["-i", str(work.iterations)] if work.iterations else []
        # osu keeps its own warm-up under -i; hopsim's explicit iterations have none.
        warmup = work.warmup if work.warmup >= 0 else 0 if work.iterations else None
        args += ["-x", str(warmup)] if warmup is not None else []
        return args
    if tool == "imb":
        # -iter: at most N repetitions per size (IMB still caps them at 40 MiB / size and
        # 10 s; the block prints the count it ran, which the replay takes). -zero_size
        # off when 0 was not asked for: a collective of 0 bytes is Open MPI's immediate
        # return, IMB times that call overhead, and the engine has nothing to replay.
        return [_IMB_BENCHMARK[work.kind], "-npmin", str(work.ranks),
                "-msglog", f"0:{max(_max_size(work), 1).bit_length() - 1}"] + \
            (["-iter", str(work.repetitions)] if work.repetitions else []) + \
            (["-zero_size", "off"] if work.sizes and 0 not in work.sizes else [])
    return ["-message-size", str(work.request_bytes), "-exchanges", str(work.exchanges)]


def algorithm_arguments(work) -> list[str]:
    """mpirun's MCA flags that force a collective's algorithm in Open MPI's coll/tuned
    (its dynamic rules, the algorithm by the number the engine's decision table gives
    it), so that a live run and its replay with --algorithm run the same schedule."""
    if not work.algorithm:
        return []
    from .. import _engine

    number = _engine.collectives.openmpi_number(work.kind, work.algorithm)
    return ["--mca", "coll_tuned_use_dynamic_rules", "1",
            "--mca", f"coll_tuned_{work.kind}_algorithm", str(number)]


def run_live(workload: str, ranks: int, ranks_per_node: int = 1, *, tool: str = "hopbench",
             tool_path: str | None = None, hostfile: str | None = None,
             emulate_cluster: int | None = None, link_rate: str | None = None,
             burst: int | None = None, out: str | None = None, timeout: float = 600,
             oversubscribe: bool = False, seed: int = 1, reception: str | None = None,
             progress=None, cluster=None, mca=(), sample_nic_queue: bool = False,
             congestion_control: str | None = None, **params) -> tuple[dict, str]:
    """Run one workload live. Returns (the JSON dict, the tool's text output) and, with
    `out`, writes result.json, the raw output and the mpirun command into that folder.

    Parameters are those of hopsim.simulate (sizes, iterations, repetitions,
    request_bytes, reply_bytes, exchanges, destinations, overlay, degree; reception).
    Raises InputError (one line) on bad input or a failed run; KeyboardInterrupt
    (also on SIGTERM under the CLI) after everything was torn down. `cluster`: an
    EmulatedCluster already up, used instead of building one (its owner tears it down;
    several runs then share one cluster, as calibrate --live --campaign does). `mca`:
    (name, value) pairs passed to mpirun as --mca (Open MPI's own parameters, e.g.
    btl_tcp_eager_limit); the result records them, and any OMPI_MCA_* variable of the
    environment, which mpirun passes on as well. `sample_nic_queue`: sample every emulated
    host's tbf backlog while the run goes (live/nic_queue.py), kept as live.nic_queue.
    `congestion_control`: the emulated hosts' TCP congestion control (default: this
    machine's), recorded as live.congestion_control.
    """
    mca = check_mca(mca)
    if cluster is not None:
        emulate_cluster, link_rate, burst = cluster.size, cluster.link_rate, cluster.burst
    if tool not in TOOLS:
        raise InputError(f"--tool: must be one of {', '.join(TOOLS)}, got {tool!r}")
    from ..placement import resolve

    placed = resolve(params.pop("placement", None), ranks)
    work = make_workload(workload, ranks, ranks_per_node, seed, placed, **params)
    ranks_per_node = work.ranks_per_node  # an explicit map gives its own
    if placed.policy != "block" and hostfile is None and emulate_cluster is None:
        raise InputError("--placement: placing ranks on hosts needs --hostfile or --emulate-cluster")
    if workload not in _TOOL_WORKLOADS[tool]:
        raise InputError(f"--tool {tool} measures {', '.join(_TOOL_WORKLOADS[tool])}, not {workload}")
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
    if congestion_control is not None and (emulate_cluster is None or cluster is not None):
        raise InputError("--congestion-control applies to the cluster --emulate-cluster builds")
    from .cluster import check_congestion_control

    check_congestion_control(congestion_control)
    if sample_nic_queue and (emulate_cluster is None or link_rate == "none"):
        raise InputError("--sample-nic-queue samples an emulated host's tbf: it needs "
                         "--emulate-cluster with a --link-rate other than none")
    if hostfile is not None and not Path(hostfile).is_file():
        raise InputError(f"--hostfile: {hostfile} does not exist")
    bounds.check("timeout", timeout, "--timeout")
    if emulate_cluster is not None:
        from .cluster import EmulatedCluster, check_available, cut_packets_note, teardown_command
        check_available()
        if work.nodes_used > emulate_cluster:
            raise InputError(f"--ranks: {ranks} ranks at {ranks_per_node} per host need "
                             f"{work.nodes_used} hosts; --emulate-cluster gives {emulate_cluster}")
    real_hosts = None
    if hostfile is not None and placed.policy != "block":
        # Host i of the placement: a file's own host names, else the hostfile's, in order.
        real_hosts = list(placed.hosts) or _hostfile_hosts(hostfile, work)
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
    from ..outputs import Outputs
    from ..reaper import Reaper

    outputs = Outputs()
    out_dir = outputs.folder(out, "--out") if out is not None else None  # refused before the run

    with ExitStack() as stack:
        import tempfile
        # The watcher kills mpirun's group, tears the emulated cluster down and removes
        # the scratch folder if hopsim itself is killed (SIGKILL included).
        reaper = stack.enter_context(Reaper())
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hopsim-live-")))
        reaper.folder(scratch)
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
        cmd += algorithm_arguments(work)
        for name, value in mca:
            cmd += ["--mca", name, value]
        own_cluster = cluster is None
        if emulate_cluster is not None:
            if own_cluster:
                cluster = EmulatedCluster(emulate_cluster, link_rate, burst,
                                          congestion_control=congestion_control)
            reaper.command(teardown_command(cluster.tag))
            if own_cluster:
                stack.enter_context(cluster)
            if progress and own_cluster:
                progress(f"emulated cluster {cluster.tag}: {emulate_cluster} hosts on "
                         f"{cluster.subnet}, " + (f"links {link_rate} (burst {cluster.burst} B)"
                                                  if cluster.burst else "links uncapped (no tbf)")
                         + f", TCP {cluster.congestion_control}")
                note = cut_packets_note(cluster.rate_bits, cluster.burst)
                if note:
                    progress("note: " + note)
            cmd += cluster.mpirun_args()
            cmd += mapping_arguments(work, cluster.addresses(), scratch,
                                     lambda n: cluster.hostfile(ranks_per_node, n))
        elif hostfile is not None:
            cmd += mapping_arguments(work, real_hosts, scratch,
                                     lambda n: _write_hostfile(scratch, real_hosts[:n], ranks_per_node),
                                     user_hostfile=Path(hostfile).resolve())
        cmd += [binary] + args
        nic_queue = None
        if sample_nic_queue:
            from .nic_queue import NicQueueSampler
            with NicQueueSampler(cluster) as sampler:
                stdout, stderr, wall = _mpirun(cmd, timeout, stack, reaper)
            nic_queue = sampler.record()
        else:
            stdout, stderr, wall = _mpirun(cmd, timeout, stack, reaper)
        raw_files = {}
        if tool == "netpipe" and (scratch / "np.out").is_file():
            raw_files["np.out"] = (scratch / "np.out").read_text()
        if work.overlay:
            raw_files["routes.txt"] = (scratch / "routes.txt").read_text()
        live = {"tool": tool, "mpirun": shlex.join(cmd), "hosts": emulate_cluster or hostfile or "localhost",
                "node_of_rank": work.node_of_rank() if (emulate_cluster or hostfile) else [0] * ranks,
                "link_rate": link_rate, "burst_bytes": cluster.burst if cluster else None,
                "congestion_control": cluster.congestion_control if cluster else None,
                "oversubscribed": crowded, "cores": cores, "mca": dict(mca),
                "mca_environment": {k: v for k, v in sorted(os.environ.items())
                                    if k.startswith("OMPI_MCA_")}}
        if nic_queue is not None:
            live["nic_queue"] = nic_queue
        platform = live_platform(emulate_cluster, link_rate, cluster.burst if cluster else None,
                                 hostfile, cores)
        parameters = work.parameters()
        parameters["reception"] = reception or "any-source"
        parameters["placement"] = work.placement_record()
        text, result = _interpret(tool, stdout, raw_files, work, platform, parameters, wall, live)
    if out_dir is not None:
        with outputs:
            _write_outputs(outputs, out_dir, tool, cmd, stdout, stderr, raw_files, result, text)
    return result, text


_MCA_NAME = re.compile(r"[A-Za-z0-9_]+")


def check_mca(pairs) -> list[tuple[str, str]]:
    """(name, value) pairs for mpirun's --mca, or InputError naming the bad one."""
    out = []
    for pair in pairs:
        name, value = pair
        if not _MCA_NAME.fullmatch(name):
            raise InputError(f"--mca: expected an Open MPI parameter name (letters, digits, _), "
                             f"got {name!r}")
        if not value or any(ch in value for ch in "\n\r\0"):
            raise InputError(f"--mca {name}: expected a value on one line, got {value!r}")
        out.append((name, value))
    return out


def live_platform(emulate_cluster: int | None, link_rate: str | None, burst_bytes: int | None,
                  hostfile: str | None, cores: int) -> dict:
    """What a live run ran on, as simulate's results name their platform: a name, a node
    count and a hash of the platform's content (sha256 of its description, first 16 hex
    digits), so that two results under one name are told apart. The content is the
    emulated cluster's shape (hosts, link rate, tbf burst), a hostfile's text (its hosts
    and slots; node count: its hosts), or this machine (host name, cores) for localhost."""
    import hashlib
    import socket

    if emulate_cluster is not None:
        name, nodes = f"live:emulated-{emulate_cluster}x{link_rate}", emulate_cluster
        content = {"emulated_hosts": emulate_cluster, "link_rate": link_rate,
                   "burst_bytes": burst_bytes}
    elif hostfile is not None:
        from ..placement import read

        text = bounds.read_text(hostfile, "--hostfile")
        name, nodes = f"live:{Path(hostfile).name}", len(read(text, hostfile, 1).hosts)
        content = {"hostfile": text}
    else:
        name, nodes = "live:localhost", 1
        content = {"host": socket.gethostname(), "cores": cores}
    digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:16]
    return {"platform": name, "platform_nodes": nodes, "platform_hash": digest}


def mapping_arguments(work, hosts: list[str], scratch: Path, hostfile_of, user_hostfile=None) -> list[str]:
    """mpirun's placement flags for the workload's placement, node i being hosts[i]
    (docs/live.md, "Placement"): block keeps ranks_per_node per host in rank order
    (--map-by ppr:K:node, as Open MPI's default --map-by slot with K slots per host);
    cyclic deals ranks round-robin over the hosts it uses (--map-by node on a hostfile of
    those hosts, K slots each); an explicit map is written as a rankfile (every rank's
    host; the slot list is every core, as the runs do not bind)."""
    k = work.ranks_per_node
    if work.placement == "block":
        source = user_hostfile or hostfile_of(None)
        return ["--hostfile", str(source), "--map-by", f"ppr:{k}:node"]
    if work.placement == "cyclic":
        return ["--hostfile", str(hostfile_of(work.nodes_used)), "--map-by", "node"]
    cores = os.cpu_count() or 1
    rankfile = scratch / "rankfile"
    rankfile.write_text("".join(f"rank {r}={hosts[n]} slot=0-{cores - 1}\n"
                                for r, n in enumerate(work.node_map)))
    return ["--hostfile", str(user_hostfile or hostfile_of(None)), "--rankfile", str(rankfile)]


def _hostfile_hosts(hostfile: str, work) -> list[str]:
    """The hosts of a real cluster's hostfile, in its order (node i is host i)."""
    from ..placement import read

    text = bounds.read_text(hostfile, "--hostfile")  # regular, at most 1 MiB
    hosts = read(text, hostfile, 1).hosts
    if work.nodes_used > len(hosts):
        raise InputError(f"--ranks: the placement uses {work.nodes_used} hosts; --hostfile "
                         f"{hostfile} lists {len(hosts)}")
    return list(hosts)


def _write_hostfile(scratch: Path, hosts: list[str], slots: int) -> Path:
    path = scratch / "hostfile"
    path.write_text("".join(f"{h} slots={slots}\n" for h in hosts))
    return path


def _mpirun(cmd: list[str], timeout: float, stack: ExitStack, reaper=None) -> tuple[str, str, float]:
    from ..reaper import die_with_parent

    env = dict(os.environ)
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True, preexec_fn=die_with_parent)
    if reaper is not None:  # hopsim.reaper kills the group if hopsim itself is killed
        reaper.group(proc.pid)
        stack.callback(reaper.forget_group, proc.pid)
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
    """(the tool's text, the result's JSON); platform: live_platform()'s record, or a
    name alone (kept runs read again)."""
    from ..formats import text as tool_text

    platform = platform if isinstance(platform, dict) else {"platform": platform}

    if tool == "hopbench":
        raw = live_result.parse_raw(stdout)
        result = live_result.to_result(raw, platform=platform["platform"],
                                       platform_nodes=platform.get("platform_nodes"),
                                       platform_hash=platform.get("platform_hash"),
                                       ranks_per_node=work.ranks_per_node,
                                       seed=work.seed, parameters=parameters, wall_seconds=wall,
                                       node_map=live["node_of_rank"])
        live["host_names"] = [raw["hosts"].get(r, "") for r in range(raw["ranks"])]
        text = tool_text(result)
        if work.kind == "roundtrip":
            from ..formats import ray_network_test
            raw_files["NetworkTest.txt"] = ray_network_test(result)
        return text, live_result.result_dict(result, live)
    # Third-party tools: their own text; the figures are read back only for NetPIPE
    # (the other parsers belong to hopsim's calibration readers).
    out = {**platform, "workload": work.kind, "ranks": work.ranks,
           "ranks_per_node": work.ranks_per_node, "seed": work.seed, "simulated_seconds": None,
           "wall_seconds": wall, "messages": None, "results": None,
           "parameters": parameters, "live": live}
    if tool == "netpipe" and "np.out" in raw_files:
        # Read by the calibration parser (one reader of NetPIPE's format), in the shape of
        # simulate's pingpong rows; MB/s in 10^6 bytes like hopsim's own (NetPIPE's Mbps
        # column is in 2^20 bits per second).
        from ..calibration.parsers import parse_text

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
    from ..calibration.parsers import parse_text

    ms = parse_text(stdout, "latency_checker output", "latency_checker")
    per_rank = lambda stat: [m.value for m in sorted((m for m in ms if m.statistic == stat),
                                                     key=lambda m: m.rank)]
    return {"lc_average_of_averages_us": next(m.value for m in ms if m.rank is None),
            "lc_mode_us": per_rank("lc_mode_us"), "lc_mean_us": per_rank("lc_mean_us")}


def _tool_rows(tool: str, stdout: str, work) -> list[dict]:
    """osu_latency's, osu_bw's or IMB's table read by the calibration parsers (one reader
    of each format), in the shape of simulate's rows for the workload."""
    from ..calibration.parsers import parse_text

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


def _write_outputs(outputs, out_dir: Path, tool, cmd, stdout, stderr, raw_files, result, text):
    files = {"mpirun.cmd": shlex.join(cmd) + "\n", f"{tool}.stdout": stdout,
             f"{tool}.stderr": stderr, "output.txt": text, **raw_files,
             "result.json": json.dumps(result, indent=1) + "\n"}
    for name, content in files.items():
        outputs.text(outputs.file(out_dir / name, "--out"), content)


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
    p.add_argument("--emulate-cluster", type=bounds.flag("emulate_cluster"), metavar="H",
                   help="build H hosts on this machine: network namespaces, a bridge, tbf "
                        "link caps; needs root and --link-rate (default: no emulated cluster)")
    p.add_argument("--link-rate", metavar="RATE",
                   help="with --emulate-cluster: tbf cap of each host link in tc's syntax, "
                        "e.g. 200mbit or 1gbit, or none for no tbf (required there; no default)")
    p.add_argument("--burst", type=bounds.flag("burst"), metavar="BYTES",
                   help="with --emulate-cluster: tbf burst in bytes, at least 1500 (default "
                        "10 ms of traffic at --link-rate, at least 16 KiB)")
    p.add_argument("--congestion-control", metavar="NAME",
                   help="with --emulate-cluster: the hosts' TCP congestion control, one this "
                        "kernel has loaded (e.g. cubic, bbr); recorded in the result (default: "
                        "this machine's, which a new namespace inherits)")
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
    p.add_argument("--timeout", type=bounds.flag("timeout"), default=600, metavar="S",
                   help="kill the run after S seconds (default 600)")
    p.add_argument("--oversubscribe", action="store_true",
                   help="allow more busy-polling ranks than cores (numbers then measure the scheduler)")
    p.add_argument("--mca", nargs=2, action="append", metavar=("NAME", "VALUE"),
                   help="pass an Open MPI parameter to mpirun (repeatable), e.g. --mca "
                        "btl_tcp_eager_limit 4194304; recorded in the result (default: none)")
    p.add_argument("--sample-nic-queue", action="store_true",
                   help="with --emulate-cluster and a tbf: sample each host's NIC queue (the "
                        "tbf's backlog) about every ms while the run goes; the result keeps "
                        "its maximum and percentiles (live.nic_queue), which calibrate takes "
                        "as network.nic_queue_bytes (default: not sampled)")
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
                            reception=args.reception, progress=progress, mca=args.mca or (),
                            sample_nic_queue=args.sample_nic_queue,
                            congestion_control=args.congestion_control, **params)
    if not args.json:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.write(json.dumps(result) + "\n")
    return 0
