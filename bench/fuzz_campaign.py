"""The long fuzz campaign: tests/test_fuzz_contract.py's strategies, round after round with
a new hypothesis seed each round, for as long as asked.

    nice -n 19 .venv/bin/python bench/fuzz_campaign.py --minutes 60 --examples 200 \\
        --report bench/fuzz-campaign.json

Each round runs the fuzz tests with HOPSIM_FUZZ_CAMPAIGN=1 (random, not derandomized),
--hypothesis-seed=ROUND and HOPSIM_FUZZ_EXAMPLES examples per generating test, and adds
the exit statuses the tests saw (HOPSIM_FUZZ_REPORT) to the totals. A failing round keeps
its pytest output (hypothesis prints the falsifying example) in the report and the
campaign goes on with the next seed.

The rounds run on a snapshot of the committed tree (git archive HEAD) with the installed
engine module copied beside it, not on the working tree: a mutation run (bench/mutation.py)
rewrites source files in place, and a fuzz round importing one mid-mutant would report
the mutant, not hopsim.
"""
from __future__ import annotations

import argparse
import collections
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The subpackages' folders, as pyproject.toml maps them into hopsim/ (one list to keep).
SUBPACKAGES = [src for dest, src in tomllib.loads((REPO / "pyproject.toml").read_text())
               ["tool"]["scikit-build"]["wheel"]["packages"].items()
               if (REPO / src).is_dir() and src != "python"]
# Imports hopsim from the snapshot: the editable install's finder (first on sys.meta_path)
# would send `import hopsim` to the working tree.
BOOT = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path "
        "if 'ScikitBuild' not in type(f).__name__]; sys.path.insert(0, sys.argv.pop(1)); "
        "import pytest; sys.exit(pytest.main(sys.argv[1:]))")


def snapshot(into: Path) -> tuple[Path, Path]:
    """(the tree of HEAD, a folder holding its `hopsim` package with the built engine)."""
    tree, lib = into / "tree", into / "lib"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "HEAD"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    package = lib / "hopsim"
    shutil.copytree(tree / "python", package)
    for sub in SUBPACKAGES:
        shutil.copytree(tree / sub, package / sub, dirs_exist_ok=True)
    engine = Path(importlib.import_module("hopsim._engine").__file__)
    shutil.copy2(engine, package / engine.name)
    for extra in ("bin", "live/hopbench/hopbench"):
        src = engine.parent / extra
        if src.is_dir():
            shutil.copytree(src, package / extra, dirs_exist_ok=True)
        elif src.is_file():
            shutil.copy2(src, package / extra)
    return tree, lib


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--examples", type=int, default=200, help="per generating test and round")
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--report", type=Path, default=REPO / "bench" / "fuzz-campaign.json")
    args = ap.parse_args(argv)
    totals: dict = collections.defaultdict(collections.Counter)
    report = {"command": " ".join(sys.argv), "rounds": [], "failures": [], "statuses": totals}
    end = time.monotonic() + args.minutes * 60
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hopsim-fuzz-") as d:
        tree, lib = snapshot(Path(d))
        report["commit"] = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"],
                                          capture_output=True, text=True).stdout.strip()
        seed = args.first_seed
        while time.monotonic() < end:
            counts = Path(d) / f"counts-{seed}.json"
            env = dict(os.environ, HOPSIM_FUZZ_CAMPAIGN="1",
                       HOPSIM_FUZZ_EXAMPLES=str(args.examples), HOPSIM_FUZZ_REPORT=str(counts),
                       PYTHONDONTWRITEBYTECODE="1")
            round_start = time.monotonic()
            p = subprocess.run([sys.executable, "-c", BOOT, str(lib), "-q", "-p", "no:cacheprovider",
                                f"--hypothesis-seed={seed}", "tests/test_fuzz_contract.py"],
                               cwd=tree, env=env, capture_output=True, text=True)
            seen = json.loads(counts.read_text()) if counts.is_file() else {}
            for test, statuses in seen.items():
                totals[test].update({str(k): v for k, v in statuses.items()})
            examples = sum(sum(v.values()) for v in seen.values())
            report["rounds"].append({"seed": seed, "status": p.returncode, "examples": examples,
                                     "seconds": round(time.monotonic() - round_start)})
            if p.returncode != 0:
                report["failures"].append({"seed": seed, "output": p.stdout[-6000:]})
            report["examples"] = sum(r["examples"] for r in report["rounds"])
            report["minutes"] = round((time.monotonic() - start) / 60, 1)
            args.report.write_text(json.dumps(report, indent=1) + "\n")
            print(f"seed {seed}: status {p.returncode}, {examples} examples, "
                  f"{report['examples']} in all, {report['minutes']} min", flush=True)
            seed += 1
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
