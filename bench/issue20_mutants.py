"""The seven mutants issue 20 found alive, applied one at a time to the source tree (the
editable install that bootstrap.sh makes imports it), each against the tests meant to
kill it. Prints KILLED or SURVIVED per mutant; exit status 1 if any survived.

    .venv/bin/python bench/issue20_mutants.py
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The tests must import the tree mutated here, not a copy in site-packages.
if Path(__import__("hopsim").__file__).resolve().parent != REPO / "python":
    sys.exit("hopsim is not the editable install of this tree: run bash bootstrap.sh first")

MUTANTS = [
    ("validate: noisy value as the mean", "calibration/validate.py",
     "c.simulated_us = statistics.median(c.distribution)",
     "c.simulated_us = statistics.mean(c.distribution)", "tests/test_validate.py"),
    ("fit: noise sigma from the variance", "calibration/fit.py",
     "float(np.std(pos))", "float(np.var(pos))", "tests/test_fit_constants.py"),
    ("fit: per-byte host cost halved", "calibration/fit.py",
     "2e-3 * platform.per_byte_overhead_ns", "1e-3 * platform.per_byte_overhead_ns",
     "tests/test_fit_constants.py"),
    ("netpipe: NetPIPE 5 latency halved", "calibration/parsers/netpipe.py",
     '"latency_us": values[3],', '"latency_us": values[3] / 2,', "tests/test_parse.py"),
    ("workload: user degree rounded down", "python/workload.py",
     "(2 * len(self.overlay_arcs) + self.ranks) // (2 * self.ranks)",
     "len(self.overlay_arcs) // self.ranks", "tests/test_workload.py"),
    ("runner: p99 from p50", "scenarios/runner.py",
     '"rtt_p99_us": r["rtt_us"]["p99"]', '"rtt_p99_us": r["rtt_us"]["p50"]',
     "tests/test_cli_outputs.py"),
    ("runner: per-rank SD from the average", "scenarios/runner.py",
     '"per_rank_mean_sd_us": r["per_rank_mean_us"]["sd"]',
     '"per_rank_mean_sd_us": r["per_rank_mean_us"]["average"]', "tests/test_cli_outputs.py"),
]


def _drop_bytecode(path: Path) -> None:
    # A cached .pyc with the same size and mtime second as the mutant would be taken for it.
    for pyc in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
        pyc.unlink()


def main() -> int:
    alive = 0
    for name, rel, old, new, tests in MUTANTS:
        path = REPO / rel
        original = path.read_text()
        if original.count(old) != 1:
            print(f"{name}: the original line is not found once in {rel}; mutant not applied")
            alive += 1
            continue
        path.write_text(original.replace(old, new))
        _drop_bytecode(path)
        try:
            p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                                f"--rootdir={REPO}", str(REPO / tests)], capture_output=True, text=True)
        finally:
            path.write_text(original)
            _drop_bytecode(path)
        verdict = "KILLED" if p.returncode != 0 else "SURVIVED"
        alive += verdict == "SURVIVED"
        print(f"{verdict:9} {name} ({rel}; {tests})", flush=True)
    return 1 if alive else 0


if __name__ == "__main__":
    sys.exit(main())
