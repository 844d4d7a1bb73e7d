"""A bounded mutation pass over hopsim's Python layer: which small code changes does the
test suite not notice?

    .venv/bin/python bench/mutation.py [--max N] [--files python/formats.py ...] [--tests ...]

The tests import the installed package: with bootstrap.sh's editable install that is the
source tree, otherwise a copy in site-packages; this script mutates whichever the tests
import, one mutant at a time, runs the chosen tests (-x, a time limit per
run), and restores the file. Operators, on the AST: a comparison flipped (< <=, > >=,
== !=, in / not in), an arithmetic operator swapped (+ -, * /, // %), an integer or float
constant moved by one (or 0 <-> 1), `and` <-> `or`, a `not` dropped. Mutants are
enumerated in source order and, when there are more than --max, every k-th is taken, so
the sample is spread over the file and the same every run.

It prints each survivor (file:line, the operator, the mutated line) and a summary. A
survivor is a change no test notices: either a missing test or equivalent code.
"""
from __future__ import annotations

import argparse
import ast
import copy
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SITE = Path(__import__("hopsim").__file__).resolve().parent
# Source folder -> its place in the installed package (pyproject.toml's wheel.packages).
PACKAGE_OF = {"python": "", "platforms": "platforms", "scenarios": "scenarios",
              "topologies": "topologies", "calibration": "calibration", "live": "live"}
# An editable install (bootstrap.sh's) imports the source tree itself: mutate it there.
EDITABLE = SITE == REPO / "python"

_CMP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
        ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In}
_BIN = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
        ast.FloorDiv: ast.Mod, ast.Mod: ast.FloorDiv}


def _sites(tree):
    """(node index in ast.walk order, description) of every mutable spot."""
    out = []
    for i, node in enumerate(ast.walk(tree)):
        if isinstance(node, ast.Compare) and type(node.ops[0]) in _CMP:
            out.append((i, f"{type(node.ops[0]).__name__} -> {_CMP[type(node.ops[0])].__name__}"))
        elif isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            out.append((i, f"{type(node.op).__name__} -> {_BIN[type(node.op)].__name__}"))
        elif isinstance(node, ast.BoolOp):
            out.append((i, "and <-> or"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            out.append((i, "not dropped"))
        elif (isinstance(node, ast.Constant) and type(node.value) in (int, float)
              and not isinstance(node.value, bool)):
            out.append((i, f"{node.value!r} -> {_moved(node.value)!r}"))
    return out


def _moved(v):
    return 1 if v == 0 else (0 if v == 1 else v + 1)


def _mutate(tree, index):
    tree = copy.deepcopy(tree)
    for i, node in enumerate(ast.walk(tree)):
        if i != index:
            continue
        if isinstance(node, ast.Compare):
            node.ops[0] = _CMP[type(node.ops[0])]()
        elif isinstance(node, ast.BinOp):
            node.op = _BIN[type(node.op)]()
        elif isinstance(node, ast.BoolOp):
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        elif isinstance(node, ast.UnaryOp):
            return _drop_not(tree, index), node.lineno
        elif isinstance(node, ast.Constant):
            node.value = _moved(node.value)
        return tree, node.lineno
    raise IndexError(index)


def _drop_not(tree, index):
    # Rebuild: replace the UnaryOp(Not) at `index` by its operand.
    nodes = list(ast.walk(tree))
    target = nodes[index]
    for parent in nodes:
        for field, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, field, target.operand)
            elif isinstance(value, list):
                for j, item in enumerate(value):
                    if item is target:
                        value[j] = target.operand
    return tree


def installed(source: Path) -> Path:
    if EDITABLE:
        return source.resolve()
    rel = source.resolve().relative_to(REPO)
    return SITE / PACKAGE_OF[rel.parts[0]] / Path(*rel.parts[1:])


def _drop_bytecode(target: Path) -> None:
    # A cached .pyc of the same size and second as a mutant would be taken for it.
    for pyc in (target.parent / "__pycache__").glob(f"{target.stem}.*.pyc"):
        pyc.unlink()


def run_tests(tests, timeout) -> str:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    try:
        p = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                            *tests], cwd=REPO, capture_output=True, text=True, timeout=timeout,
                           env=env)
    except subprocess.TimeoutExpired:
        return "killed (timeout)"
    return "survived" if p.returncode == 0 else "killed"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", nargs="+", default=["python/formats.py", "python/bounds.py",
                                                   "scenarios/runner.py", "python/cli.py"])
    ap.add_argument("--tests", nargs="+", default=[
        "tests/test_formats.py", "tests/test_cli_outputs.py", "tests/test_cli_bounds.py",
        "tests/test_cli.py", "tests/test_scenario_outputs.py", "tests/test_scenario_files.py"])
    ap.add_argument("--max", type=int, default=60, help="mutants in all (default 60)")
    ap.add_argument("--timeout", type=float, default=240)
    args = ap.parse_args(argv)
    plan = []
    for f in args.files:
        src = (REPO / f).read_text()
        if installed(REPO / f).read_text() != src:
            sys.exit(f"{f}: the installed copy differs from the source; reinstall first")
        tree = ast.parse(src)
        plan += [(f, tree, i, what) for i, what in _sites(tree)]
    step = max(1, -(-len(plan) // args.max))
    sample = plan[::step]
    print(f"{len(plan)} mutants in {', '.join(args.files)}; running every {step}th: {len(sample)}",
          flush=True)
    survivors, start = [], time.perf_counter()
    for f, tree, index, what in sample:
        target = installed(REPO / f)
        original = target.read_text()
        mutated, line = _mutate(tree, index)
        try:
            target.write_text(ast.unparse(mutated))
            _drop_bytecode(target)
            outcome = run_tests(args.tests, args.timeout)
        finally:
            target.write_text(original)
            _drop_bytecode(target)
        src_line = (REPO / f).read_text().splitlines()[line - 1].strip()
        print(f"{outcome:>17}  {f}:{line}  {what}  | {src_line}", flush=True)
        if outcome == "survived":
            survivors.append((f, line, what, src_line))
    print(f"\n{len(sample) - len(survivors)} of {len(sample)} killed, {len(survivors)} survived, "
          f"{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
