"""The baseline of the rigs campaign and its README: calibrate on each rig's 2-host files
with `hopsim calibrate`, validate its 4-host files with `hopsim validate`, one median
absolute error per file; and OUT/README.md listing every file with its command and load.

Called by `python -m hopsim.calibration.rigs --baseline` (calibration/rigs.py).
"""
from __future__ import annotations

import ast
import hashlib
import json
import re
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

from ..errors import InputError
from .rigs import CASES, NIC_QUEUE_PROBE, Rig
from .file_placement import split_arg
from .latency_bound import counted_flags, rig_half_length
from .rigs_noise import noise_floor
from ..platforms.platform import OPEN_MPI_TCP_EAGER_LIMIT

# The intra-node path of the 2-per-host cases is not seen by 2-host runs: as in the
# demonstration (calibration/demo.py), it comes from --base, the fit of the shared-memory
# osu_latency kept in tests/data.
SHM_FILE = Path("tests/data/osu/osu_latency-7.4-shm.txt")


def _hopsim(*args) -> list[str]:
    return [sys.executable, "-m", "hopsim", *map(str, args)]


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise InputError(f"{shlex.join(cmd[2:])} failed: {p.stderr.strip()[-300:]}")
    return p


def _show(cmd: list[str]) -> str:
    """The command as a user types it (hopsim on PATH)."""
    return "hopsim " + shlex.join(cmd[3:])


# From here a message is many packets on every rig: the former counting rule (the
# "from 64 KiB" columns, kept beside the counted ones).
LARGE = 65536
# The campaign's probe that decides the shared capacity's form, measured on 3 hosts
# (python -m hopsim.calibration.rigs --campaign): its file, under the rig's folder.
ALLTOALL = Path("campaign-3hosts/alltoall-pairwise-3x1/result.json")
# The result keys of a runner-up the main fit left open: UNDECIDED + its slug.
UNDECIDED = "_undecided_"


def _median(values):
    return round(statistics.median(values), 1) if values else None


def _exact_median(values):
    return statistics.median(values) if values else None


def _rounded(value):
    return None if value is None else round(value, 1)


def _max(values):
    return round(max(values), 1) if values else None


def files_of(out: Path, hosts: int, trials: int) -> list[tuple[object, Path]]:
    return [(c, out / c.file(t)) for t in range(1, trials + 1) for c in CASES
            if c.hosts == hosts and (out / c.file(t)).is_file()]


def fit_arg(case, path: Path) -> str:
    """A file as calibrate takes it: with its placement (FILE@K[,cyclic]) when it ran
    several ranks per host, which an IMB output does not say, and an osu run's -i and -x
    (FILE@iterations=N,warmup=M), which its output does not print."""
    suffix = []
    if case.per_host != 1:
        suffix += [str(case.per_host)] + (["cyclic"] if case.placement == "cyclic" else [])
    if case.fmt == "osu" and "-i" in case.args:
        flag = dict(zip(case.args[::2], case.args[1::2]))
        suffix += [f"iterations={flag['-i']}", f"warmup={flag['-x']}"]
    return f"{path}@{','.join(suffix)}" if suffix else str(path)


def _calibrate(fit: Path, files: list, base: Path, closed_form: bool = False,
               eager_limit: int | None = None, refit_stale: bool = False) -> str:
    """`hopsim calibrate FILES --base BASE --nodes 4 --out FIT`, its report beside FIT as
    .txt; the command as a user types it. A fit made by the same command from the same
    contents of its files and base is kept (the joint fit takes minutes; delete FIT to
    redo it): FIT.sha256 holds the digest it was made from (see _digest) and the digest of
    the code that made it (code_digest); refit_stale: a fit made by other code is redone."""
    cmd = _hopsim("calibrate", *files, "--base", base, "--nodes", 4, "--out", fit,
                  *(["--closed-form"] if closed_form else []),
                  *(["--eager-limit", eager_limit] if eager_limit is not None else []))
    report, shown, stamp = fit.with_suffix(".txt"), _show(cmd), fit.with_suffix(".sha256")
    inputs = [Path(split_arg(f)[0]) for f in files] + [base]
    digest = _digest(shown, inputs)
    made = fit.is_file() and report.is_file() and fit.read_text().startswith(f"# Written by: {shown}\n")
    if made and stamp.is_file():
        made = stamp.read_text().split()[0] == digest
    elif made:
        # A fit from before the digests: its date is all there is to go by.
        made = all(f.stat().st_mtime < fit.stat().st_mtime for f in inputs)
    code = fit_code(stamp) if made else None
    if made and refit_stale and code != code_digest():
        made = False
    if not made:
        report.write_text(_run(cmd).stdout)
        code = code_digest()
    stamp.write_text(f"{digest} sha256 of the command and the contents of its {len(inputs)} files\n"
                     + (f"{code} {CODE_NOTE}\n" if code else ""))
    return shown


# The sources a fit is made by: every module of the package and the engine's, except this
# report's own (rigs*.py), which draws no fit. The digest of the command and its files
# alone kept fits that the calibration had since changed (two rigs' fits were 37 commits
# old before a refit found it).
CODE_DIRS = ("calibration", "platforms", "topologies", "python", "simulator")
CODE_SUFFIXES = (".py", ".cpp", ".hpp", ".txt")
# The command's front end: it picks a subcommand and turns exceptions into exit statuses;
# calibrate's options and all it runs live in calibration/. A fix to how ^C is reported
# there staled every fit before it was left out.
CODE_FRONT_END = ("python/cli.py", "python/__main__.py")
CODE_NOTE = "sha256 of the sources that made the fit (rigs_report.code_digest)"


def code_digest(root: Path | None = None) -> str | None:
    """sha256 over the fit-making sources (CODE_DIRS less CODE_FRONT_END; relative paths
    and contents, in path order; a Python module by its syntax tree without docstrings,
    so that an edited comment does not make every fit stale); None where they are not
    all there (an installed copy has no engine sources)."""
    root = root or Path(__file__).resolve().parents[1]
    if not all((root / d).is_dir() for d in CODE_DIRS):
        return None
    h = hashlib.sha256()
    paths = sorted(p for d in CODE_DIRS for p in (root / d).rglob("*")
                   if p.is_file() and p.suffix in CODE_SUFFIXES and "__pycache__" not in p.parts
                   and not p.name.startswith("rigs")
                   and p.relative_to(root).as_posix() not in CODE_FRONT_END)
    for p in paths:
        data = _python_code(p.read_bytes()) if p.suffix == ".py" else p.read_bytes()
        h.update(str(p.relative_to(root)).encode() + b"\0")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _python_code(source: bytes) -> bytes:
    """A module's syntax tree with its docstrings dropped: what it does, not its prose."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree).encode()


def fit_code(stamp: Path) -> str | None:
    """The code digest a fit's stamp records (its second line); None for a fit stamped
    before they were recorded."""
    if not stamp.is_file():
        return None
    lines = stamp.read_text().splitlines()
    return lines[1].split()[0] if len(lines) > 1 and lines[1].split() else None


def _digest(command: str, paths: list[Path]) -> str:
    """sha256 over a command and the contents of its files, in order: what a result was made
    from. File dates would do in a working copy, but a fresh clone gives every file the
    same date, which would redo every fit (16-30 minutes a rig)."""
    h = hashlib.sha256(command.encode())
    for path in paths:
        data = path.read_bytes()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def baseline(root: Path, rig: Rig, trials: int, closed_form: bool = False,
             cores: int | None = None, refit_stale: bool = False) -> dict:
    """Fit on the rig's 2-host files, validate every file; per-file median |error|, over
    all its cases and over those counted() with the measuring machine's `cores`.
    refit_stale: fits made by other code than today's are redone."""
    out = root / rig.name
    done = out / "baseline.json"
    data = [f for _, f in files_of(out, 2, trials) + files_of(out, 4, trials)]
    # What the report is made from besides the code: the measurements, and the fits as
    # they are now (one refitted by hand redoes the report; a stale one is refitted below).
    made_from = _digest("baseline", data + sorted(out.glob("baseline-fit*.toml")))
    if done.is_file():
        kept = json.loads(done.read_text())  # nothing changed since: delete it to redo
        fresh = (kept["inputs_sha256"] == made_from if "inputs_sha256" in kept
                 else all(f.stat().st_mtime < done.stat().st_mtime for f in data))
        current = not refit_stale or fit_code(out / "baseline-fit.sha256") == code_digest()
        if fresh and current and kept.get("closed_form", False) == closed_form \
                and kept.get("machine_cores") == cores:
            return kept
    base = root / "base-shm.toml"
    commands = []
    if not base.is_file():
        if not SHM_FILE.is_file():
            raise InputError(f"{SHM_FILE} not found: run from hopsim's source folder")
        cmd = _hopsim("calibrate", SHM_FILE, "--ranks-per-node", 2, "--base", "two-nodes",
                      "--nodes", 4, "--out", base)
        _run(cmd)
    commands.append(_show(_hopsim("calibrate", SHM_FILE, "--ranks-per-node", 2, "--base",
                                  "two-nodes", "--nodes", 4, "--out", base)))
    # The 2-host runs at 1 rank per host. Those at 2 per host (added later, measured after
    # every fit) are predicted like the 4-host files: a second thing the fit never saw,
    # and the 2-host half of the same-traffic pairs.
    fit_files = [fit_arg(c, p) for c, p in files_of(out, 2, trials) if c.per_host == 1]
    if (out / NIC_QUEUE_PROBE).is_file():
        # A 2-host run as well: the NIC queue that a rendezvous's control messages wait behind.
        fit_files.append(str(out / NIC_QUEUE_PROBE))
    # Which cases count (calibration/latency_bound.py): those of a run without a zero-byte
    # time of its own are set against the rig's 2-host ping-pong.
    n_half = rig_half_length([p for c, p in files_of(out, 2, trials)
                              if c.tool == "imb-pingpong" and c.per_host == 1])

    def flags(cases: list[dict]) -> list[bool]:
        return counted_flags(cases, cores, n_half)

    fit = out / "baseline-fit.toml"
    # Every rig runs Open MPI over TCP: its eager limit is known, not left to the screen
    # (which picks stand-ins for small-message costs: docs/calibration.md, "--eager-limit").
    # The extra fits below keep the screen: they are second opinions on the shared capacity.
    commands.append(_calibrate(fit, fit_files, base, closed_form,
                               None if closed_form else OPEN_MPI_TCP_EAGER_LIMIT, refit_stale=refit_stale))
    extra, failed = {}, {}

    def extra_fit(suffix: str, files: list[Path]) -> None:
        # A second opinion: if its fit fails, the rig's report says so beside the others
        # instead of losing them all.
        path = out / f"baseline-fit{suffix.replace('_', '-')}.toml"
        try:
            commands.append(_calibrate(path, files, base, refit_stale=refit_stale))
        except InputError as e:
            failed[suffix.lstrip("_")] = str(e)
        else:
            extra[suffix] = path

    alltoall = out / ALLTOALL
    if alltoall.is_file() and not closed_form:
        # The same fit with one 3-host probe more: the 2-host files cannot tell a per-node
        # limiter from a backbone, the pairwise alltoall over 3 hosts can.
        extra_fit("_alltoall", fit_files + [alltoall])
    campaign = sorted(alltoall.parent.parent.glob("*/result.json"))
    if campaign and not closed_form:
        # The campaign alone (hopbench, osu_bw and IMB on 3 hosts), none of the rig's files.
        extra_fit("_campaign", campaign)
    text = fit.read_text()
    if text.count('transport = "flow"') != 1:
        raise InputError(f"{fit}: expected one 'transport = \"flow\"' line to vary")
    fit_queue = out / "baseline-fit-queue.toml"
    fit_queue.write_text(text.replace('transport = "flow"', 'transport = "queue"'))
    commands.append(f"(baseline-fit-queue.toml: baseline-fit.toml with transport = \"queue\" under [network])")
    variants = {"": fit, "_queue": fit_queue}
    swapped = other_form(text)
    if swapped is not None:
        # The shared capacity's other form (a 2-host fit cannot tell them apart): both
        # predictions are reported, the 4-host files decide (docs/calibration.md).
        form, other_text = swapped
        fit_other = out / "baseline-fit-other-form.toml"
        fit_other.write_text(other_text)
        variants["_other_form"] = fit_other
        commands.append(f"(baseline-fit-other-form.toml: baseline-fit.toml with {form})")
    variants.update(extra)
    for alt in sorted(out.glob("baseline-fit.undecided-*.toml")):
        # What the main fit left open, its runner-up in place (calibrate writes them).
        variants[UNDECIDED + alt.stem.split(".undecided-")[1].replace("-", "_")] = alt
        commands.append(f"({alt.name}: written by the fit beside baseline-fit.toml)")
    rows = []
    # Each file's medians unrounded: a median over files is taken of these, rounded once
    # (over rounded ones, E's 3.61% showed as 3.7%).
    exact: dict[tuple[str, str], float | None] = {}
    # The 4-host files only: validating the fitted files themselves costs minutes (NetPIPE's
    # and IMB's own repetition counts on a token bucket) and predicts nothing. Each group
    # is replayed with the placement it ran (--map-by node: cyclic).
    for hosts in (4,):
        for per_host, placement in ((1, "block"), (2, "block"), (2, "cyclic")):
            group = [(c, f) for c, f in files_of(out, hosts, trials)
                     if c.per_host == per_host and c.placement == placement]
            if not group:
                continue
            reports = {}
            for suffix, platform in variants.items():
                cmd = _hopsim("validate", "--platform", platform, "--nodes", 4, "--ranks-per-node",
                              per_host, "--placement", placement, *[f for _, f in group], "--json")
                reports[suffix] = json.loads(_run(cmd).stdout)
                commands.append(_show(cmd))
            for case, f in group:
                row = {"file": f.name, "hosts": hosts, "per_host": per_host,
                       "placement": case.placement}
                for suffix, report in reports.items():
                    mine = [c for c in report["cases"] if Path(c["file"]).name == f.name]
                    count = flags(mine)
                    errs = [abs(c["error_pct"]) for c in mine]
                    for key, values in (
                            (f"median_abs_error_pct{suffix}", errs),
                            (f"median_abs_error_pct_from_64KiB{suffix}",
                             [abs(c["error_pct"]) for c in mine if c["bytes"] >= LARGE]),
                            (f"median_abs_error_pct_counted{suffix}",
                             [abs(c["error_pct"]) for c, n in zip(mine, count) if n])):
                        exact[f.name, key] = _exact_median(values)
                        row[key] = _rounded(exact[f.name, key])
                    if not suffix:
                        row.update(cases=len(errs), counted=sum(count),
                                   max_abs_error_pct=_max(errs),
                                   max_abs_error_pct_counted=_max(
                                       [abs(c["error_pct"]) for c, n in zip(mine, count) if n]),
                                   per_case=[{**{k: c[k] for k in ("workload", "ranks", "bytes", "measured_us",
                                                                   "simulated_us", "error_pct")},
                                              "counted": n} for c, n in zip(mine, count)])
                rows.append(row)
    # The 2-host runs at 2 ranks per host, predicted by the main fit: per file as the
    # 4-host ones, and the model's own ratio of the same-traffic pairs.
    placed_two = [fit_arg(c, f) for c, f in files_of(out, 2, trials) if c.per_host == 2]
    two_cases, two_rows = [], []
    if placed_two:
        cmd = _hopsim("validate", "--platform", fit, "--nodes", 4, *placed_two, "--json")
        two_cases = json.loads(_run(cmd).stdout)["cases"]
        commands.append(_show(cmd))
        for arg in placed_two:
            name = Path(split_arg(arg)[0]).name
            mine = [c for c in two_cases if Path(c["file"]).name == name]
            count = flags(mine)
            exact[name, "two_host_counted"] = _exact_median(
                [abs(c["error_pct"]) for c, n in zip(mine, count) if n])
            two_rows.append({"file": name, "placement": arg.rpartition("@")[2],
                             "cases": len(mine), "counted": sum(count),
                             "median_abs_error_pct_counted": _rounded(exact[name, "two_host_counted"]),
                             "median_abs_error_pct_from_64KiB": _median(
                                 [abs(c["error_pct"]) for c in mine if c["bytes"] >= LARGE]),
                             "max_abs_error_pct": round(max(abs(c["error_pct"]) for c in mine), 1),
                             "per_case": [{k: c[k] for k in ("workload", "ranks", "bytes", "measured_us",
                                                             "simulated_us", "error_pct")} for c in mine]})
    four_cases = [{"file": r["file"], **c} for r in rows for c in r["per_case"]]
    floors = noise_floor(rows)
    floors_counted = noise_floor([{**r, "per_case": [c for c in r["per_case"] if c["counted"]]}
                                  for r in rows])
    for r in rows:
        r["noise_floor_pct"] = floors[r["file"]]
        r["noise_floor_counted_pct"] = floors_counted[r["file"]]
    result = {"rig": rig.name, "closed_form": closed_form, "machine_cores": cores,
              "commands": commands,
              "fitted_on": [Path(f).name for f in fit_files],
              "failed_fits": failed,
              "same_traffic": same_traffic(out, trials, two_cases + four_cases),
              "two_host_placed_files": two_rows,
              "median_over_two_host_placed_files_pct": _median(
                  [exact[r["file"], "two_host_counted"] for r in two_rows
                   if exact[r["file"], "two_host_counted"] is not None]),
              "shared_capacity": _structure_line(out / "baseline-fit.txt"),
              "shared_capacity_alltoall": (_structure_line(out / "baseline-fit-alltoall.txt")
                                           if "_alltoall" in extra else None),
              "shared_capacity_campaign": (_structure_line(out / "baseline-fit-campaign.txt")
                                           if "_campaign" in extra else None),
              "median_noise_floor_pct": _median(
                  [r["noise_floor_pct"] for r in rows if r["noise_floor_pct"] is not None]),
              "median_noise_floor_counted_pct": _median(
                  [r["noise_floor_counted_pct"] for r in rows
                   if r["noise_floor_counted_pct"] is not None]),
              "half_length_bytes": None if n_half is None else round(n_half),
              "files": rows}

    def over_files(key: str) -> list[float]:
        return [exact[r["file"], key] for r in rows if exact[r["file"], key] is not None]

    for suffix in variants:
        result[f"median_over_predicted_files_pct{suffix}"] = _median(
            over_files(f"median_abs_error_pct{suffix}"))
        result[f"median_over_counted_files_pct{suffix}"] = _median(
            over_files(f"median_abs_error_pct_counted{suffix}"))
        result[f"median_over_imb_files_from_64KiB_pct{suffix}"] = _median(
            over_files(f"median_abs_error_pct_from_64KiB{suffix}"))
        if suffix.startswith(UNDECIDED):
            result[f"worst_counted_file_pct{suffix}"] = _max(
                over_files(f"median_abs_error_pct_counted{suffix}"))
    result["worst_counted_file_pct"] = _max([r["median_abs_error_pct_counted"] for r in rows
                                             if r["median_abs_error_pct_counted"] is not None])
    result["worst_imb_file_from_64KiB_pct"] = _max([r["median_abs_error_pct_from_64KiB"] for r in rows
                                                   if r["median_abs_error_pct_from_64KiB"] is not None])
    result["inputs_sha256"] = _digest("baseline", data + sorted(out.glob("baseline-fit*.toml")))
    done.write_text(json.dumps(result, indent=1) + "\n")
    return result


def other_form(text: str) -> tuple[str, str] | None:
    """A fitted platform file with its shared capacity in the other form at the same rate:
    (what changed, the new text), or None without one (or with a limiter on rendezvous
    messages only, which no backbone is). On 2 nodes the two forms give the
    same times in the flow model (every byte crosses both nodes' limiters and the backbone)."""
    def value(k):
        m = re.search(rf"^{k} = (\S+)$", text, re.M)
        return float(m.group(1)) if m else 0.0

    lim, bb = value("limiter_gbps"), value("backbone_gbps")
    if (lim > 0) == (bb > 0):
        return None
    if lim > 0 and re.search(r'^limiter_scope = "rendezvous"$', text, re.M):
        # A backbone carries every byte: a limiter on rendezvous messages has no other
        # form of the same mechanism to swap in.
        return None
    if lim > 0:
        form = f"the per-node limiter of {lim:g} Gbit/s as a backbone of the same rate"
        new = {"limiter_gbps": 0.0, "backbone_gbps": lim}
    else:
        form = f"the backbone of {bb:g} Gbit/s as a per-node limiter of the same rate"
        new = {"limiter_gbps": bb, "backbone_gbps": 0.0}
    for k, v in new.items():
        text = re.sub(rf"^{k} = \S+$", f"{k} = {v}", text, flags=re.M)
    return form, text


def _structure_line(report: Path) -> str | None:
    for line in report.read_text().splitlines():
        if line.strip().startswith("shared capacity:"):
            return line.strip()
    return None


# Issue 16's targets: every predicted file's counted median within 15%, their median within 10%.
TARGET_FILE_PCT, TARGET_MEDIAN_PCT = 15.0, 10.0


def targets(result: dict) -> tuple[float, float, str] | None:
    """Issue 16's verdict on one rig, (median over files, worst file, verdict), from the
    counted per-case errors unrounded: the tables round each file's median to 0.1, and a
    file at 15.01% shows as 15.0%. None when no case is counted."""
    medians = [statistics.median([abs(c["error_pct"]) for c in f["per_case"] if c["counted"]])
               for f in result.get("files", []) if any(c["counted"] for c in f["per_case"])]
    if not medians:
        return None
    median, worst = statistics.median(medians), max(medians)
    met = (median <= TARGET_MEDIAN_PCT, worst <= TARGET_FILE_PCT)
    verdict = {(True, True): "both", (True, False): "the median only",
               (False, True): "every file only", (False, False): "neither"}[met]
    return median, worst, verdict


def _fmt(x, digits=1) -> str:
    return "" if x is None else f"{x:.{digits}f}"


def key_figures(out: Path, trials: int) -> list[tuple[str, str, str]]:
    """A few figures per case, median over the trials (min..max): what a reader checks
    first. (label, median, range)."""
    from .parsers import parse_file

    wanted = [("imb-pingpong", 2, 1, "block", "t_us", 0, "IMB PingPong t, 0 B (us)"),
              ("imb-pingpong", 2, 1, "block", "t_us", 1048576, "IMB PingPong t, 1 MiB (us)"),
              ("osu_latency", 2, 1, "block", "latency_us", 1, "osu_latency, 1 B (us)"),
              ("osu_bw", 2, 1, "block", "bandwidth_mbytes_per_sec", 131072, "osu_bw, 128 KiB (MB/s)"),
              ("netpipe", 2, 1, "block", "latency_us", 1048576, "NetPIPE, 1 MiB (us)")]
    for hosts, per_host, placement in ((2, 1, "block"), (2, 2, "block"), (2, 2, "cyclic"),
                                       (4, 1, "block"), (4, 2, "block"), (4, 2, "cyclic")):
        wanted.append(("imb-exchange", hosts, per_host, placement, "t_avg_us", 1048576,
                       f"IMB Exchange {hosts}x{per_host} {placement}, 1 MiB t_avg (us)"))
    for hosts, per_host, placement in ((2, 1, "block"), (4, 1, "block"), (4, 2, "block"), (4, 2, "cyclic")):
        wanted.append(("latency_checker", hosts, per_host, placement, "lc_average_of_averages_us", 4000,
                       f"latency_checker {hosts}x{per_host} {placement}, 4000 B (us)"))
    rows = []
    for tool, hosts, per_host, placement, stat, size, label in wanted:
        case = next((c for c in CASES if (c.tool, c.hosts, c.per_host, c.placement) ==
                     (tool, hosts, per_host, placement)), None)
        if case is None:   # a campaign run without that tool
            continue
        values = []
        for t in range(1, trials + 1):
            f = out / case.file(t)
            if f.is_file():
                values += [m.value for m in parse_file(f) if m.statistic == stat and m.size == size
                           and m.rank is None][:1]
        if values:
            rows.append((label, _fmt(statistics.median(values)),
                         f"{_fmt(min(values))}..{_fmt(max(values))} ({len(values)})"))
    return rows


# IMB Exchange runs that load each node's link alike on 4 hosts and on 2: the same bytes
# per node in the same number of connections (two out of each node in a 4x1 ring, a 4x2
# block and a 2x2 block; four in a cyclic 4x2 and a cyclic 2x2). The 4x1 and the 2x2
# block also run as many ranks. What the 4-host run takes beyond the 2-host one is not
# the network's: this machine's cores and packet processing are shared by twice the
# hosts. No 2-host run shows it, so it bounds what a fit on them can predict.
SAME_TRAFFIC = (("4x1 block over 2x2 block", (4, 1, "block"), (2, 2, "block")),
                ("4x2 block over 2x2 block", (4, 2, "block"), (2, 2, "block")),
                ("4x2 cyclic over 2x2 cyclic", (4, 2, "cyclic"), (2, 2, "cyclic")))
SAME_TRAFFIC_SIZES = (65536, 131072, 262144, 524288, 1048576)


def _exchange_case(shape):
    return next(c for c in CASES if c.tool == "imb-exchange" and (c.hosts, c.per_host, c.placement) == shape)


def same_traffic(out: Path, trials: int, cases: list[dict]) -> list[dict]:
    """Per SAME_TRAFFIC pair: the 4-host run's t_avg over the 2-host one's at each
    SAME_TRAFFIC_SIZES, measured ("live") and simulated on the fit ("model", from `cases`:
    validate's JSON cases of both runs' files), each the median of the trials; None
    where a file is missing."""
    from .parsers import parse_file

    def medians(shape, simulated):
        case = _exchange_case(shape)
        by_size: dict[int, list[float]] = {}
        for t in range(1, trials + 1):
            f = out / case.file(t)
            if simulated:
                values = [(c["bytes"], c["simulated_us"]) for c in cases if Path(c["file"]).name == f.name
                          and c["workload"] == "exchange"]
            else:
                values = [(m.size, m.value) for m in parse_file(f) if m.statistic == "t_avg_us"
                          and m.rank is None] if f.is_file() else []
            for size, v in values:
                by_size.setdefault(size, []).append(v)
        return {s: statistics.median(v) for s, v in by_size.items()}

    rows = []
    for label, four, two in SAME_TRAFFIC:
        row = {"pair": label}
        for key, simulated in (("live", False), ("model", True)):
            a, b = medians(four, simulated), medians(two, simulated)
            row[key] = [round(a[s] / b[s], 3) if s in a and s in b else None for s in SAME_TRAFFIC_SIZES]
        rows.append(row)
    return rows


def _read_back(path: Path) -> str:
    """What `hopsim validate` reads of the file: the format it detects, the values."""
    from .parsers import detect_format, parse_file

    try:
        return f"{len(parse_file(path))} ({detect_format(path.read_text())})"
    except InputError as e:
        return f"parser error: {e}"


def _rest_of(command: str, common: str) -> str:
    return command.replace(common, "…", 1) if common else command


def _common(commands: list[str]) -> str:
    """The rig's cluster arguments, the same in every command: from --mca plm_rsh_agent
    to --bind-to none."""
    if not commands:
        return ""
    words = shlex.split(commands[0])
    try:
        start, end = words.index("--mca"), words.index("--bind-to") + 2
    except ValueError:
        return ""
    return shlex.join(words[start:end])


MARKER = "<!-- generated below by python -m hopsim.calibration.rigs --baseline; edit above -->"


def write_report(root: Path, rigs: list[Rig], trials: int, closed_form: bool = False,
                 cores: int | None = None, refit_stale: bool = False) -> None:
    """OUT/README.md: the rigs, the baseline per rig, every file with its command and load.
    What stands above MARKER in an existing README (the prose) is kept."""
    readme = root / "README.md"
    results = {rig.name: baseline(root, rig, trials, closed_form, cores, refit_stale) for rig in rigs}
    today = code_digest()
    made_by = {rig.name: fit_code(root / rig.name / "baseline-fit.sha256") for rig in rigs}
    stale = [name for name, code in made_by.items() if code is None or code != today]
    lines = [(f"Fits made by other code than today's (their numbers may differ from what "
              f"today's calibrate writes; `--refit-stale` redoes them): {', '.join(stale)}."
              if stale else "Every rig's fit was made by today's code.")
             + f" Today's code: sources sha256 {str(today)[:12]} (rigs_report.code_digest).", ""]
    verdicts = {rig.name: targets(results[rig.name]) for rig in rigs}
    if any(verdicts.values()):
        lines += ["## Issue 16's targets", "",
                  f"Every predicted file's counted median within {TARGET_FILE_PCT:g}%, the median "
                  f"over files within {TARGET_MEDIAN_PCT:g}%, from the unrounded per-case errors "
                  f"(the rigs' sections round to 0.1).", "",
                  "| rig | median over files | worst file | targets met |", "|---|---|---|---|"]
        lines += [f"| {name} | {v[0]:.2f}% | {v[1]:.2f}% | {v[2]} |"
                  for name, v in verdicts.items() if v]
        lines.append("")
    lines += ["## Rigs", "", "| rig | link rate (tbf) | burst | TCP congestion control | why |",
              "|---|---|---|---|---|"]
    for rig in rigs:
        lines.append(f"| {rig.name} | {rig.link_rate if rig.burst else 'none (no tbf)'} | "
                     f"{f'{rig.burst} B' if rig.burst else '-'} | "
                     f"{rig.congestion_control or 'bbr (this machine’s default)'} | {rig.why} |")
    lines.append("")
    for rig in rigs:
        out = root / rig.name
        runs = json.loads((out / "runs.json").read_text()) if (out / "runs.json").is_file() else []
        result = results[rig.name]
        lines += [f"## Rig {rig.name}: {rig.why}", "", "Key figures (median of the trials, range, count):", "",
                  "| figure | median | min..max (trials) |", "|---|---|---|"]
        lines += [f"| {a} | {b} | {c} |" for a, b, c in key_figures(out, trials)]
        two = result.get("two_host_placed_files", [])
        if two:
            lines += ["", f"Predicted as well, on 2 hosts: IMB Exchange at 2 ranks per host "
                      f"(64 KiB-1 MiB and 0 B; the fit has only 1 per host). Median over these "
                      f"files, counted cases: **{_fmt(result['median_over_two_host_placed_files_pct'])}%**.",
                      "", "| file (as calibrate and validate take it) | cases (counted) | "
                      "median abs error %, counted | from 64 KiB | worst % | error % at 64 KiB..1 MiB |",
                      "|---|---|---|---|---|---|"]
            for r in two:
                errs = " ".join(f"{c['error_pct']:+.0f}" for c in r["per_case"] if c["bytes"] >= LARGE)
                lines.append(f"| {r['file']}@{r['placement']} | {r['cases']} ({r['counted']}) | "
                             f"{_fmt(r['median_abs_error_pct_counted']) or '-'} | "
                             f"{_fmt(r.get('median_abs_error_pct_from_64KiB')) or '-'} | "
                             f"{_fmt(r['max_abs_error_pct'])} | {errs} |")
        pairs = result.get("same_traffic", [])
        if any(r is not None for p in pairs for r in p["live"]):
            lines += ["", "The same traffic per node on 4 hosts and on 2 (IMB Exchange, t_avg, "
                      "median of the trials; rigs_report.SAME_TRAFFIC): the 4-host time over "
                      "the 2-host time, measured and on the fit. Where the measured ratio "
                      "exceeds the model's, the 4-host runs pay for something no 2-host run "
                      "shows (this machine shared by twice the hosts):", "",
                      "| runs | | " + " | ".join(f"{s // 1024} KiB" for s in SAME_TRAFFIC_SIZES) + " |",
                      "|---|---|" + "---|" * len(SAME_TRAFFIC_SIZES)]
            for p in pairs:
                for key in ("live", "model"):
                    lines.append(f"| {p['pair'] if key == 'live' else ''} | {key} | "
                                 + " | ".join(_fmt(r, 2) or "-" for r in p[key]) + " |")
        other = "median_over_predicted_files_pct_other_form" in result
        a2a = "median_over_predicted_files_pct_alltoall" in result
        camp = "median_over_predicted_files_pct_campaign" in result
        how = "--closed-form" if closed_form else "(the joint fit)"
        # From the per-case errors, as the targets' table: a report kept from before the
        # median over files was taken of unrounded file medians shows the same number.
        counted = targets(result) or (result.get("median_over_counted_files_pct"),
                                      result.get("worst_counted_file_pct"))
        lines += ["", f"Baseline: `hopsim calibrate` {how} on the {len(result['fitted_on'])} "
                  f"2-host files, `hopsim validate` of each 4-host file with the placement it ran "
                  f"(per-file median and worst absolute error over its cases). Counted toward "
                  f"issue 16's targets: every case except the latency-bound ones with more "
                  f"ranks than the measuring machine's {result.get('machine_cores')} cores "
                  f"(calibration/latency_bound.py: a case under twice its run's zero-byte "
                  f"time, Hockney's half-performance length; a run of one size, against the "
                  f"2-host ping-pong's n½ of {_fmt(result.get('half_length_bytes'), 0) or '-'} B; "
                  f"the scheduler's time, not the network's; shown in the all-cases column). "
                  f"Median over the predicted files, counted cases: "
                  f"**{_fmt(counted[0])}%** (worst file "
                  f"{_fmt(counted[1])}%); counting IMB's cases from "
                  f"64 KiB only, the former rule: "
                  f"**{_fmt(result.get('median_over_imb_files_from_64KiB_pct'))}%** (worst file "
                  f"{_fmt(result.get('worst_imb_file_from_64KiB_pct'))}%)"
                  + (f"; with the 3-host alltoall probe added to the fit: "
                     f"**{_fmt(result.get('median_over_counted_files_pct_alltoall'))}%**"
                     if a2a else "")
                  + (f"; calibrated from the 3-host campaign's probes alone (none of the rig's "
                     f"files): **{_fmt(result.get('median_over_counted_files_pct_campaign'))}%**"
                     if camp else "")
                  + f"; all cases: **{_fmt(result['median_over_predicted_files_pct'])}%**; with "
                  f"`transport = \"queue\"` instead of the fit's `flow`, counted cases: "
                  f"**{_fmt(result.get('median_over_counted_files_pct_queue'))}%**"
                  + (f"; with the shared capacity's other form, counted cases: "
                     f"**{_fmt(result.get('median_over_counted_files_pct_other_form'))}%**"
                     if other else "") + ". The noise "
                  f"floor (each file against the median of the other trials of its case, measured "
                  f"against measured: rigs_noise.py), counted cases: "
                  f"**{_fmt(result.get('median_noise_floor_counted_pct'))}%**, all cases: "
                  f"**{_fmt(result.get('median_noise_floor_pct'))}%**.", ""]
        for name, error in sorted(result.get("failed_fits", {}).items()):
            lines += [f"The {'fit with the 3-host alltoall' if name == 'alltoall' else 'fit from the campaign alone'} "
                      f"failed, and is left out: `{error}`", ""]
        if result.get("shared_capacity"):
            lines += ["The fit's decision: `" + result["shared_capacity"] + "`", ""]
        for key in sorted(k for k in result if k.startswith("median_over_counted_files_pct" + UNDECIDED)):
            suffix = key[len("median_over_counted_files_pct"):]
            slug = suffix[len(UNDECIDED):].replace("_", "-")
            lines += [f"Left open by the 2-host files, its runner-up in place "
                      f"(`baseline-fit.undecided-{slug}.toml`, written by the fit): counted, "
                      f"median over files **{_fmt(result[key])}%** (worst file "
                      f"{_fmt(result.get('worst_counted_file_pct' + suffix))}%)", ""]
        if result.get("shared_capacity_alltoall"):
            lines += ["With the 3-host alltoall: `" + result["shared_capacity_alltoall"] + "`", ""]
        if result.get("shared_capacity_campaign"):
            lines += ["From the campaign alone: `" + result["shared_capacity_campaign"] + "`", ""]
        lines += ["| file | cases (counted) | median abs error %, counted | from 64 KiB | all cases | worst % | "
                  + ("with the alltoall probe, counted | " if a2a else "")
                  + ("from the campaign, counted | " if camp else "")
                  + "transport queue, counted | "
                  + ("other form, counted | " if other else "")
                  + "noise floor %, counted | all cases |",
                  "|---|---|---|---|---|---|---|---|---|" + ("---|" if a2a else "") + ("---|" if camp else "")
                  + ("---|" if other else "")]
        for r in sorted(result["files"], key=lambda r: r["file"]):
            lines.append(f"| {r['file']} | {r['cases']} ({r.get('counted', '-')}) | "
                         f"{_fmt(r.get('median_abs_error_pct_counted')) or '-'} | "
                         f"{_fmt(r.get('median_abs_error_pct_from_64KiB')) or '-'} | "
                         f"{_fmt(r['median_abs_error_pct'])} | {_fmt(r['max_abs_error_pct'])} | "
                         + (f"{_fmt(r.get('median_abs_error_pct_counted_alltoall')) or '-'} | " if a2a else "")
                         + (f"{_fmt(r.get('median_abs_error_pct_counted_campaign')) or '-'} | " if camp else "")
                         + f"{_fmt(r.get('median_abs_error_pct_counted_queue')) or '-'} | "
                         + (f"{_fmt(r.get('median_abs_error_pct_counted_other_form')) or '-'} | " if other else "")
                         + f"{_fmt(r.get('noise_floor_counted_pct')) or '-'} | "
                         f"{_fmt(r.get('noise_floor_pct')) or '-'} |")
        lines += ["", "Every case's measured and simulated time is in `baseline.json`; the "
                      "fit's own report in `baseline-fit.txt`. "
                  + (f"The fit was made by the code whose sources hash to "
                     f"{made_by[rig.name][:12]}" if made_by[rig.name] else
                     "The fit's stamp does not record the code that made it")
                  + (" (today's)." if made_by[rig.name] == today else
                     ", not today's: refit to know what today's calibrate writes.")]
        lines += ["", "Commands (from the repository root):", ""]
        lines += [f"    {c}" for c in result["commands"]]
        clusters = list(dict.fromkeys(_common([run["command"]]) for run in runs))
        lines += ["", "Runs: `…` in each command stands for the cluster's arguments below (its "
                      "rsh agent and subnet; the agent and the hostfiles are made afresh by each "
                      "campaign in a temporary folder). The load is the 1, 5 and 15-minute "
                      "average before the run; values parsed: what hopsim's parsers read of the "
                      "file, with the format they detect (as `hopsim validate` does).", ""]
        lines += [f"    {c}" for c in clusters]
        lines += ["", "| file | started (UTC) | load before | s | values parsed | command |",
                  "|---|---|---|---|---|---|"]
        for r in sorted(runs, key=lambda r: r["started_utc"]):
            parsed = _read_back(out / r["file"]) if (out / r["file"]).is_file() else \
                r.get("parse_error", f"failed: {r.get('stderr_tail', '')[:80]}")
            lines.append(f"| {r['file']} | {r['started_utc'][11:19]} | "
                         f"{' '.join(f'{x:.2f}' for x in r['load_before'])} | {r['seconds']} | {parsed} | "
                         f"`{_rest_of(r['command'], _common([r['command']]))}` |")
        lines.append("")
    # The prose is read only now: the fits take an hour, and an edit made meanwhile stays.
    head = readme.read_text().split(MARKER)[0].rstrip() if readme.is_file() else \
        "# Validation across rigs: the real tools on three emulated clusters"
    readme.write_text("\n".join([head, "", MARKER, ""] + lines).rstrip() + "\n")
