"""`hopsim smpi`: hopbench compiled with smpicc, run by smpirun on hopsim's platform.

A cross-check of the engine by SimGrid's own MPI emulation: the same program as the
live runs, on the platform and network contract hopsim_platform exports
(hopsim.platforms.simgrid), giving the same JSON as `hopsim simulate`.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from .. import bounds
from ..errors import InputError
from ..platforms import simgrid
from . import result as live_result, routes as live_routes
from .mpirun import _TOOL_WORKLOADS, LiveError, tool_arguments
from .. import workload_flags  # the same flags as simulate

SOURCES = ("hopbench.c", "routes.c", "hopbench.h")


def _source_dir() -> Path:
    return Path(__file__).resolve().parent / "hopbench"


def build_hopbench(cache: Path | None = None) -> Path:
    """hopbench built with smpicc, cached by the hash of its sources."""
    smpicc = shutil.which("smpicc")
    if smpicc is None:
        raise InputError("smpicc is not on PATH: hopsim smpi needs SimGrid's SMPI (libsimgrid-dev)")
    src = _source_dir()
    missing = [s for s in SOURCES if not (src / s).is_file()]
    if missing:
        raise InputError(f"hopbench's sources are missing from the installation ({', '.join(missing)})")
    digest = hashlib.sha256(b"".join((src / s).read_bytes() for s in SOURCES)).hexdigest()[:16]
    cache = cache or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "hopsim"
    binary = cache / f"hopbench-smpi-{digest}"
    if binary.is_file():
        return binary
    cache.mkdir(parents=True, exist_ok=True)
    tmp = binary.with_name(binary.name + f".{os.getpid()}.tmp")
    p = subprocess.run([smpicc, "-O2", "-o", str(tmp), str(src / "hopbench.c"), str(src / "routes.c")],
                       capture_output=True, text=True)
    if p.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise LiveError(f"smpicc failed: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else p.returncode}")
    tmp.replace(binary)  # atomic: concurrent runs see a whole binary or none
    return binary


def run_smpi(platform, workload: str, ranks: int, ranks_per_node: int = 1, *, seed: int = 1,
             reception: str | None = None, out: str | None = None, timeout: float = 600,
             extra_cfg: list[str] | None = None, **params) -> tuple[dict, str]:
    """Run hopbench under smpirun on `platform`. Returns (JSON dict, tool text)."""
    from ..api import prepare

    if workload not in _TOOL_WORKLOADS["hopbench"]:
        raise InputError(f"--workload: hopsim smpi runs hopbench, which measures "
                         f"{', '.join(_TOOL_WORKLOADS['hopbench'])}, not {workload}")
    if reception is not None:
        params["reception"] = reception
    plat, work, spec = prepare(platform, workload, ranks, ranks_per_node, seed, **params)
    params.pop("reception", None)
    simgrid.check_expressible(spec)
    bounds.check("timeout", timeout, "--timeout")
    if workload == "roundtrip" and spec["pass_us"] <= 0:
        raise InputError(f"{plat.name}: host.pass_us is 0; under SMPI a free MPI_Iprobe never "
                         f"advances simulated time, so roundtrip needs a positive pass cost")
    smpirun = shutil.which("smpirun")
    if smpirun is None:
        raise InputError("smpirun is not on PATH: hopsim smpi needs SimGrid's SMPI (libsimgrid-dev)")
    from ..outputs import Outputs

    outputs = Outputs()
    out_dir = outputs.folder(out, "--out") if out is not None else None  # refused before the run
    binary = build_hopbench()
    from ..reaper import Reaper, die_with_parent

    # The watcher kills smpirun's group and removes the folder if hopsim itself is killed.
    with Reaper() as reaper, tempfile.TemporaryDirectory(prefix="hopsim-smpi-") as tmp:
        reaper.folder(tmp)
        tmp = Path(tmp)
        (tmp / "platform.xml").write_text(simgrid.platform_xml(spec))
        node_map = work.node_of_rank()
        (tmp / "hostfile").write_text(simgrid.hostfile(node_map))
        args = tool_arguments("hopbench", work, tmp)
        if work.overlay:
            live_routes.write(tmp / "routes.txt", params["overlay"], ranks, params.get("degree"), seed)
            args += ["--routes", str(tmp / "routes.txt")]
        if workload == "roundtrip":
            args += ["--reception", spec["reception"]]
        cmd = [smpirun, "-platform", str(tmp / "platform.xml"), "-hostfile", str(tmp / "hostfile"),
               "-np", str(ranks), *simgrid.cfg_flags(spec), *(extra_cfg or []),
               "--cfg=smpi/display-timing:no", "--log=root.thresh:warning", str(binary), *args]
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True, preexec_fn=die_with_parent)
        reaper.group(proc.pid)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise LiveError(f"smpirun exceeded --timeout {timeout:g} s and was killed") from None
        except BaseException:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        finally:
            _kill_leftovers(proc.pid)
            reaper.forget_group(proc.pid)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            tail = " | ".join(l.strip() for l in (stderr or stdout).strip().splitlines()[-3:])
            raise LiveError(f"smpirun failed with status {proc.returncode}: {tail[:300]}")
    raw = live_result.parse_raw(stdout, "smpirun output")
    parameters = work.parameters()
    parameters["reception"] = spec["reception"]
    parameters["placement"] = work.placement_record()
    result = live_result.to_result(raw, platform=plat.name, ranks_per_node=work.ranks_per_node,
                                   seed=seed, parameters=parameters, wall_seconds=wall,
                                   node_map=node_map, platform_nodes=plat.nodes,
                                   platform_hash=plat.values_hash())
    from ..formats import text as tool_text

    text = tool_text(result)
    out_dict = live_result.result_dict(result, {"tool": "hopbench under SMPI",
                                                "smpirun": shlex.join(cmd)})
    out_dict["smpi"] = out_dict.pop("live")
    if out_dir is not None:
        with outputs:
            for name, content in (("smpirun.cmd", shlex.join(cmd) + "\n"),
                                  ("hopbench.stdout", stdout), ("output.txt", text),
                                  ("result.json", json.dumps(out_dict, indent=1) + "\n")):
                outputs.text(outputs.file(out_dir / name, "--out"), content)
    return out_dict, text


def _kill_leftovers(pgid: int) -> None:
    # smpirun's group may outlive smpirun itself (a helper it forked): nothing stays.
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass


def add_parser(sub):
    p = sub.add_parser("smpi", help="run hopbench under SimGrid's SMPI on a hopsim platform",
                       description="Compile hopbench with smpicc and run it under smpirun on "
                                   "the platform hopsim builds for P; prints the tool's output "
                                   "and simulate's JSON. docs/live.md.")
    p.add_argument("--platform", required=True, metavar="NAME_OR_FILE",
                   help="required: a preset name or platform TOML file (docs/platforms.md)")
    workload_flags.add(p, ranks_per_node_help="ranks placed on each node, in blocks (default 1)",
                       reception_default="the platform's host.reception",
                       families=workload_flags.TABLE_FAMILIES)
    p.add_argument("--out", metavar="DIR",
                   help="write result.json, hopbench's output and the smpirun command into "
                        "DIR (default: nothing written)")
    p.add_argument("--timeout", type=bounds.flag("timeout"), default=600, metavar="S",
                   help="kill smpirun after S seconds of wall time (default 600)")
    p.add_argument("--json", action="store_true", help="print only the JSON object")
    return run


def run(args) -> int:
    import sys

    params = workload_flags.params(args)
    result, text = run_smpi(args.platform, args.workload, args.ranks, args.ranks_per_node,
                            seed=args.seed, reception=args.reception, out=args.out,
                            timeout=args.timeout, **params)
    if not args.json:
        sys.stdout.write(text)
    sys.stdout.write(json.dumps(result) + "\n")
    return 0
