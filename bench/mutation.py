"""Mutation testing of hopsim's whole Python layer with cosmic-ray, each mutant against
the tests that run its line.

    .venv/bin/pip install -e ".[test,mutation]"      # cosmic-ray and coverage, from PyPI
    nice -n 19 .venv/bin/python bench/mutation.py --every 20 --report bench/mutation-report.json

cosmic-ray mutates a module's file in place, runs a test command and restores the file;
with bootstrap.sh's editable install the tests import the source tree, so they see each
mutant. The whole suite takes far too long per mutant on two cores, so:

1. Coverage map (once; kept in --map, default build/mutation-coverage.json): the suite,
   less the tests that need real MPI runs, SMPI builds or Dask (SLOW), runs once under
   coverage with each test's node id as its context, in the pytest process (dynamic
   context, bench/mutation_coverage.py) and in the hopsim commands tests start as
   subprocesses (static context from HOPSIM_TEST_ID).
   The map: for every line of the Python layer, the tests that ran it.
2. Sampling: cosmic-ray's mutants of every module (its default operators) less those
   inside type annotations (equivalent: annotation_spans), in source order, every k-th
   (--every k, from the (k // 2)-th): spread over each file, the same on every run. The
   others are marked skipped in cosmic-ray's session.
3. Per mutant, cosmic-ray's test command is this script with --run-tests: it finds the
   lines the mutant changed (the file against git HEAD), and runs `pytest -x` on the tests
   that ran those lines. A line that only runs at import (module constants, signatures)
   gets every test that ran any line of its module. At most MAX_TESTS run, fastest
   first. A line no test runs is reported as not covered (the mutant survives without a
   test being run); a mutant whose tests exceed --timeout is reported apart (cosmic-ray
   would count it killed).

Before the run the Python layer must be committed (the mutants are found against HEAD).
The report (JSON) has, per package, mutants generated, run, killed, survived (and how many
of those no test covers) and incompetent (cosmic-ray could not run them), and every
survivor with its file, line, operator and diff.
"""
from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ["python", "calibration", "platforms", "scenarios", "topologies", "live"]
# Real MPI runs, emulated clusters, SMPI builds, Dask clusters and pseudo-terminal
# sessions: minutes each, and the modules they drive have unit tests of their own.
SLOW = ["test_live_cluster.py", "test_live_hopbench.py", "test_smpi.py", "test_calibrate_live.py",
        "test_rigs.py", "test_sweep_dask.py", "test_terminal.py", "test_progress.py",
        "test_doc_commands.py", "test_presets_regenerate.py", "test_calibrate_pacing.py",
        "test_platform_record.py"]
NOT_COVERED = 0  # --run-tests' exit status when no test runs the mutated line (survives)
# A line of the command-line core runs in hundreds of tests: a mutant gets the fastest
# MAX_TESTS of those that ran its line (a survivor says so: "capped").
MAX_TESTS = 60


def modules(packages: list[str]) -> list[Path]:
    """The packages' modules, taken in turn from each package (a run stopped early has
    results for every package)."""
    lists = []
    for pkg in packages:
        root = REPO / pkg
        files = sorted(root.glob("*.py")) if pkg == "python" else sorted(root.rglob("*.py"))
        lists.append([f for f in files if "__pycache__" not in f.parts and f.stat().st_size > 0])
    out = []
    for i in range(max(map(len, lists))):
        out += [files[i] for files in lists if i < len(files)]
    return out


# --- 1. the coverage map ---------------------------------------------------------------

def build_map(path: Path, tests: list[str]) -> None:
    """Run the tests under coverage; write {"lines": {file: {line: [node ids]}},
    "seconds": {node id: duration}} to path."""
    import coverage

    with tempfile.TemporaryDirectory(prefix="hopsim-coverage-") as d:
        d = Path(d)
        rc = d / "coveragerc"
        rc.write_text("[run]\n"
                      f"source = {', '.join(str(REPO / p) for p in PACKAGES)}\n"
                      f"data_file = {d / 'data'}\n"
                      "parallel = true\n"
                      "context = ${HOPSIM_TEST_ID-}\n")
        # Every Python process started with COVERAGE_PROCESS_START measures itself.
        pth = Path(sysconfig.get_paths()["purelib"]) / "zz_hopsim_mutation_coverage.pth"
        pth.write_text("import coverage; coverage.process_startup()\n")
        try:
            env = dict(os.environ, COVERAGE_PROCESS_START=str(rc),
                       PYTHONPATH=str(REPO / "bench"), HOPSIM_TEST_TIMES=str(d / "times.json"))
            env.pop("HOPSIM_TEST_ID", None)
            subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "-p", "mutation_coverage", *tests,
                            *(f"--ignore=tests/{t}" for t in SLOW)], cwd=REPO, env=env)
        finally:
            pth.unlink()
        combined = coverage.Coverage(data_file=str(d / "data"))
        combined.combine([str(d)])
        data = combined.get_data()
        out = {}
        for filename in data.measured_files():
            rel = str(Path(filename).resolve().relative_to(REPO))
            lines = {}
            for line, contexts in data.contexts_by_lineno(filename).items():
                lines[line] = sorted({c.split("|")[-1] for c in contexts})  # "" = no test
            out[rel] = lines
        times = json.loads((d / "times.json").read_text())
    path.write_text(json.dumps({"lines": out, "seconds": times}) + "\n")


# --- 3. one mutant's tests -------------------------------------------------------------

def changed_lines(rel: str) -> list[int]:
    """Lines of HEAD's version of rel that the file on disk changes."""
    old = subprocess.run(["git", "-C", str(REPO), "show", f"HEAD:{rel}"], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    new = (REPO / rel).read_text().splitlines()
    lines = []
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag != "equal":
            lines += list(range(i1 + 1, max(i2, i1 + 1) + 1))
    return lines


def tests_for(rel: str, lines: list[int], cover: dict) -> tuple[list[str], str]:
    # cover: the map's "lines"; the node ids come back in name order
    """(node ids to run, how they were chosen). A line that ran with no test's context
    ran at import (during collection): a module constant or a signature, which any test
    of the module may depend on, so every test that ran a line of the module is added."""
    of_file = cover.get(rel, {})
    ran = [t for line in lines for t in of_file.get(str(line), [])]
    ids = {t for t in ran if t}
    how = "line"
    if "" in ran:
        ids |= {t for ts in of_file.values() for t in ts if t}
        how = "module"
    return sorted(ids), how if ids else "none"


def run_tests(rel: str, map_path: Path) -> int:
    cover = json.loads(map_path.read_text())
    ids, how = tests_for(rel, changed_lines(rel), cover["lines"])
    # Fastest first: with -x a killed mutant stops at its first failing test.
    ids.sort(key=lambda t: cover["seconds"].get(t, 0.0))
    if not ids:
        print("not covered: no test runs this line")
        return NOT_COVERED
    print(f"{len(ids)} tests ({how})", flush=True)
    if len(ids) > MAX_TESTS:
        print(f"capped: the {MAX_TESTS} fastest of {len(ids)}", flush=True)
        ids = ids[:MAX_TESTS]
    # Node ids of parametrized tests hold spaces and brackets: passed as they are.
    return subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                           *ids], cwd=REPO).returncode


# --- 2. sampling and the run -------------------------------------------------------------

def annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) of every type annotation: under `from __future__ import annotations`
    (and in dataclass fields) they are strings no code reads, so a mutant there is
    equivalent by construction (`str | None` -> `str ** None`)."""
    spans = []
    for node in ast.walk(ast.parse(source)):
        found = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found = [a.annotation for a in (*node.args.posonlyargs, *node.args.args,
                                            *node.args.kwonlyargs, node.args.vararg,
                                            node.args.kwarg) if a is not None]
            found.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            found = [node.annotation]
        spans += [((a.lineno, a.col_offset), (a.end_lineno, a.end_col_offset))
                  for a in found if a is not None]
    return spans


def cosmic_ray(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "cosmic_ray.cli", *args], cwd=REPO, check=True,
                   stdout=subprocess.DEVNULL)


def mutate_module(module: Path, map_path: Path, every: int, timeout: float, scratch: Path) -> dict:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    rel = str(module.relative_to(REPO))
    config = scratch / f"{rel.replace('/', '_')}.toml"
    session = config.with_suffix(".sqlite")
    command = [sys.executable, str(Path(__file__).resolve()), "--run-tests", rel, "--map", str(map_path)]
    config.write_text(
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(rel)}\n"
        f"timeout = {timeout:.0f}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(shlex.join(command))}\n"
        "[cosmic-ray.distributor]\nname = \"local\"\n")
    cosmic_ray("init", str(config), str(session))
    spans = annotation_spans(module.read_text())
    with use_db(str(session), WorkDB.Mode.open) as db:
        every_item = sorted(db.work_items, key=lambda w: (tuple(w.mutations[0].start_pos),
                                                          w.mutations[0].operator_name,
                                                          w.mutations[0].occurrence))
        items = [w for w in every_item
                 if not any(a <= tuple(w.mutations[0].start_pos) < b for a, b in spans)]
        skipped = [w.job_id for w in every_item if w not in items]
        skipped += [w.job_id for i, w in enumerate(items) if i % every != every // 2]
        if skipped:
            db.set_multiple_results(skipped, WorkResult(output="not sampled",
                                                        worker_outcome=WorkerOutcome.SKIPPED))
    cosmic_ray("exec", str(config), str(session))
    out = {"generated": len(every_item), "annotations": len(every_item) - len(items),
           "run": len(every_item) - len(skipped), "killed": 0, "timeout": 0, "survived": 0,
           "not_covered": 0, "incompetent": 0, "survivors": []}
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            m = item.mutations[0]
            outcome = result.test_outcome.value if result.test_outcome else "incompetent"
            if result.worker_outcome != WorkerOutcome.NORMAL:
                outcome = "incompetent"
            if outcome == "killed" and (result.output or "").strip() == "timeout":
                outcome = "timeout"  # cosmic-ray counts it killed; it may be slow tests
            out[outcome] += 1
            if outcome == "survived":
                uncovered = "not covered" in (result.output or "")
                out["not_covered"] += uncovered
                out["survivors"].append({"file": rel, "line": m.start_pos[0],
                                         "operator": m.operator_name, "not_covered": uncovered,
                                         "capped": "capped:" in (result.output or ""),
                                         "diff": result.diff})
    out["survivors"].sort(key=lambda s: s["line"])
    return out


KEYS = ("generated", "annotations", "run", "killed", "timeout", "survived", "not_covered", "incompetent")


def _totals(report: dict) -> None:
    packages: dict = {}
    for rel, entry in report["modules"].items():
        total = packages.setdefault(rel.split("/")[0], {"modules": 0, **{k: 0 for k in KEYS}})
        total["modules"] += 1
        for k in KEYS:
            total[k] += entry.get(k, 0)
    report["packages"] = packages


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packages", nargs="+", default=PACKAGES, choices=PACKAGES)
    ap.add_argument("--files", nargs="+", help="only these modules (paths from the repository root)")
    ap.add_argument("--every", type=int, default=20, help="run every k-th mutant (default 20)")
    ap.add_argument("--map", type=Path, default=REPO / "build" / "mutation-coverage.json",
                    help="the coverage map (built first when missing)")
    ap.add_argument("--map-tests", nargs="+", default=["tests"],
                    help="what the coverage map runs (default: the suite, less SLOW)")
    ap.add_argument("--timeout", type=float, default=180, help="seconds per mutant's tests")
    ap.add_argument("--report", type=Path, default=REPO / "bench" / "mutation-report.json")
    ap.add_argument("--run-tests", metavar="MODULE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.run_tests:
        return run_tests(args.run_tests, args.map)
    try:
        import cosmic_ray  # noqa: F401
        import coverage  # noqa: F401
    except ImportError:
        sys.exit("cosmic-ray or coverage is missing: pip install -e '.[test,mutation]'")
    if Path(__import__("hopsim").__file__).resolve().parent != REPO / "python":
        sys.exit("hopsim is not the editable install of this tree: the mutants would not be tested")
    if subprocess.run(["git", "-C", str(REPO), "diff", "--quiet", "HEAD", "--", *PACKAGES]).returncode:
        sys.exit("commit the Python layer first: mutants are found against HEAD")
    start = time.perf_counter()
    if not args.map.is_file():
        build_map(args.map, args.map_tests)
        print(f"coverage map: {time.perf_counter() - start:.0f} s", flush=True)
    todo = [REPO / f for f in args.files] if args.files else modules(args.packages)
    report = {"every": args.every, "commit": subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip(),
        "packages": {}, "modules": {}}
    with tempfile.TemporaryDirectory(prefix="hopsim-mutation-") as scratch:
        for module in todo:
            rel = str(module.relative_to(REPO))
            entry = mutate_module(module, args.map, args.every, args.timeout, Path(scratch))
            report["modules"][rel] = entry
            print(f"{rel}: {entry['generated']} generated, {entry['run']} run, {entry['killed']} "
                  f"killed, {entry['timeout']} timed out, {entry['survived']} survived "
                  f"({entry['not_covered']} not covered), {entry['incompetent']} incompetent",
                  flush=True)
            _totals(report)
            report["seconds"] = round(time.perf_counter() - start)
            args.report.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
