"""The bad-input contract, fuzzed: whatever a user gives, hopsim either succeeds (exit 0)
or refuses with exit status 2, one line on stderr starting "hopsim", no traceback, and
no file written or left behind.

Inputs: real measurement files of every format (tests/data/fuzz/seed-*) with numbers
replaced by hostile ones (negative, zero, NaN, inf, 1e999, 2^70, words), lines dropped,
duplicated or cut; platform and scenario TOML with hostile values and deep nesting; and
command lines built from every command's flags with hostile values. Examples are bounded
(derandomized, a few dozen per test) so CI stays fast; bench/fuzz_campaign.py runs the
same strategies for as long as one wants (HOPSIM_FUZZ_CAMPAIGN=1: random, seeded by
pytest's --hypothesis-seed, so each round draws new examples). tests/data/fuzz/bad-* are the regressions
(each must be refused).
"""
from __future__ import annotations

import collections
import io
import json
import os
import re
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hopsim import cli

DATA = Path(__file__).parent / "data" / "fuzz"
SEEDS = sorted(DATA.glob("seed-*"))
EXAMPLES = int(os.environ.get("HOPSIM_FUZZ_EXAMPLES", "25"))
SETTINGS = dict(deadline=None, derandomize="HOPSIM_FUZZ_CAMPAIGN" not in os.environ,
                max_examples=EXAMPLES, database=None, suppress_health_check=list(HealthCheck))

HOSTILE_NUMBERS = ["-1", "-4.5", "0", "0.0", "-0", "nan", "NaN", "inf", "-inf", "Infinity",
                   "1e999", "1e-320", "1180591620717411303424", "2147483648", "", "x", "1..2",
                   "0x10", "1e308"]


# Exit statuses seen per test; HOPSIM_FUZZ_REPORT=FILE writes them out (bench's campaign).
STATUSES: dict = collections.defaultdict(collections.Counter)


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    if os.environ.get("HOPSIM_FUZZ_REPORT"):
        Path(os.environ["HOPSIM_FUZZ_REPORT"]).write_text(json.dumps(STATUSES, indent=1) + "\n")


def _files(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.stat().st_size if p.is_file() else -1)
            for p in folder.rglob("*")}


def run(argv: list[str], folder: Path) -> tuple[int, str, str]:
    """cli.main in-process, in folder; (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(folder)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                status = cli.main(argv)
            except SystemExit as e:  # argparse's --help
                status = e.code
    finally:
        os.chdir(old)
    return status, out.getvalue(), err.getvalue()


def check_contract(argv, folder: Path, inputs: dict) -> int:
    """Run argv in folder holding exactly `inputs`; assert the contract; the status."""
    status, _, err = run(argv, folder)
    STATUSES[os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0].split("[")[0]][status] += 1
    assert status in (0, 2), (argv, status, err)
    assert "Traceback" not in err, (argv, err)
    if status == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("hopsim"), (argv, err)
        assert _files(folder) == inputs, (argv, err, _files(folder))
    return status


@st.composite
def mutated_text(draw, seed: str) -> str:
    text = seed
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["number", "number", "number", "drop", "dup", "cut", "garbage"]))
        lines = text.splitlines(keepends=True)
        if op == "number":
            spots = [m.span() for m in re.finditer(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", text)]
            if spots:
                a, b = draw(st.sampled_from(spots))
                new = draw(st.one_of(st.sampled_from(HOSTILE_NUMBERS),
                                     st.floats(allow_nan=True, allow_infinity=True).map(repr),
                                     st.integers(-2**70, 2**70).map(str)))
                text = text[:a] + new + text[b:]
        elif op == "drop" and lines:
            i = draw(st.integers(0, len(lines) - 1))
            text = "".join(lines[:i] + lines[i + 1:])
        elif op == "dup" and lines:
            i = draw(st.integers(0, len(lines) - 1))
            text = "".join(lines[:i + 1] + lines[i:])
        elif op == "cut":
            text = text[:draw(st.integers(0, len(text)))]
        elif op == "garbage" and lines:
            i = draw(st.integers(0, len(lines) - 1))
            junk = draw(st.text(st.characters(blacklist_categories=("Cs",)), max_size=30))
            text = "".join(lines[:i] + [junk + "\n"] + lines[i:])
    return text


def _seed_and_mutation():
    return st.sampled_from(SEEDS).flatmap(
        lambda p: st.tuples(st.just(p), mutated_text(p.read_text())))


@settings(**SETTINGS)
@given(_seed_and_mutation())
def test_malformed_measurement_files_validate(case):
    seed, text = case
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        (folder / seed.name).write_text(text)
        check_contract(["validate", "--platform", "two-nodes", seed.name], folder, _files(folder))


@settings(**SETTINGS)
@given(_seed_and_mutation(), st.booleans())
def test_malformed_measurement_files_calibrate(case, plot):
    seed, text = case
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        (folder / seed.name).write_text(text)
        argv = ["calibrate", seed.name, "--base", "two-nodes", "--out", "fit.toml"]
        if plot:
            (folder / "taken.png").mkdir()  # a folder where the figure should go: refused
            argv += ["--plot", "taken.png"]
        status = check_contract(argv, folder, _files(folder))
        assert status == 2 or not plot


# --- platform and scenario TOML ---------------------------------------------------------

def _toml_value():
    scalars = st.one_of(st.sampled_from(["nan", "inf", "-inf", "-1", "0", "-0.0", "1e400",
                                          "1180591620717411303424", "true", '""', '"x"',
                                          '"../../evil"', "1", "2", "10.0", "0.5"]),
                        st.floats(allow_nan=False, allow_infinity=False).map(repr),
                        st.integers(-10, 4).map(str))
    nested = st.integers(1, 700).map(lambda k: "[" * k + "]" * k)
    return st.one_of(scalars, nested, scalars.map(lambda v: f"[{v}, {v}]"),
                     scalars.map(lambda v: f"{{ a = {v} }}"))


PLATFORM = {"name": '"fz"', "nodes.count": "2", "nodes.cores": "1",
            "network.latency_us": "1.0", "network.bandwidth_gbps": "10.0",
            "host.send_overhead_us": "0.5", "host.pass_us": "0.1", "intranode.latency_us": "0.2",
            "noise.sigma": "0"}


def _toml(doc: dict) -> str:
    top = [f"{k} = {v}" for k, v in doc.items() if "." not in k]
    sections: dict = {}
    for k, v in doc.items():
        if "." in k:
            s, sub = k.split(".", 1)
            sections.setdefault(s, []).append(f"{sub} = {v}")
    return "\n".join(top + [f"\n[{s}]\n" + "\n".join(v) for s, v in sections.items()]) + "\n"


@settings(**SETTINGS)
@given(st.dictionaries(st.sampled_from(list(PLATFORM) + ["network.bogus", "extra"]),
                       _toml_value(), min_size=1, max_size=3),
       st.sampled_from(["simulate", "export", "show"]))
def test_malformed_platform_files(changes, command):
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        (folder / "p.toml").write_text(_toml({**PLATFORM, **changes}))
        argv = {"simulate": ["simulate", "--platform", "p.toml", "--workload", "pingpong",
                             "--ranks", "2", "--sizes", "0,8", "--iterations", "10"],
                "export": ["platforms", "export", "p.toml"],
                "show": ["platforms", "show", "p.toml"]}[command]
        check_contract(argv, folder, _files(folder))


SCENARIO = {"platform": '"two-nodes"', "workload": '"roundtrip"', "ranks": "2",
            "exchanges": "2", "request_bytes": "8"}


@settings(**SETTINGS)
@given(st.dictionaries(st.sampled_from(list(SCENARIO) + ["seed", "ranks_per_node", "sweep.ranks",
                                                         "sweep.exchanges", "platform_overrides.latency_us"]),
                       _toml_value(), min_size=1, max_size=3))
def test_malformed_scenario_files(changes):
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        (folder / "s.toml").write_text(_toml({**SCENARIO, **changes}))
        check_contract(["run", "s.toml", "--out", "out"], folder, _files(folder))


# --- command lines ----------------------------------------------------------------------

VALUES = HOSTILE_NUMBERS + ["1", "2", "0,8", "two-nodes", "pingpong", "roundtrip", "debruijn",
                            "--", "-", ".", "..", "x.png", "out", "in.txt", "/dev/zero",
                            "fifo", "dir"]
FLAGS = {
    "simulate": ["--platform", "--workload", "--ranks", "--ranks-per-node", "--sizes",
                 "--iterations", "--exchanges", "--seed", "--degree", "--overlay", "--window"],
    "topology": ["--ranks", "--degree", "--seed", "--out", "--plot"],
    "validate": ["--platform", "--nodes", "--ranks-per-node", "--plot", "--seed"],
    "calibrate": ["--base", "--out", "--plot", "--nodes", "--ranks-per-node", "--tool",
                  "--iterations", "--name", "--sizes", "--burst"],
    "platforms": ["--out", "--format"],
    "smpi": ["--timeout", "--platform", "--ranks", "--out"],
    "live": ["--timeout", "--ranks", "--emulate-cluster", "--burst", "--out"],
}
POSITIONAL = {"topology": ["debruijn", "kautz", "x"], "validate": ["in.txt", "fifo", "/dev/zero"],
              "calibrate": ["in.txt", "dir"], "platforms": ["export", "show", "two-nodes", "p"],
              "simulate": [], "smpi": [], "live": []}


@st.composite
def command_line(draw):
    command = draw(st.sampled_from(sorted(FLAGS)))
    positional = POSITIONAL[command]
    argv = [command] + (draw(st.lists(st.sampled_from(positional), max_size=2)) if positional else [])
    for flag in draw(st.lists(st.sampled_from(FLAGS[command]), min_size=1, max_size=4, unique=True)):
        argv += [flag, draw(st.sampled_from(VALUES))]
    # smpi and live would run real programs: a hostile value must stop them first, so
    # one is always given (the strategy draws the rest).
    if command in ("smpi", "live"):
        argv += ["--timeout", draw(st.sampled_from(["nan", "inf", "-1", "0", "1e999", ""]))]
    return argv


@settings(**SETTINGS)
@given(command_line())
def test_hostile_command_lines(argv):
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        (folder / "in.txt").write_text((DATA / "seed-osu_latency.txt").read_text())
        (folder / "dir").mkdir()
        os.mkfifo(folder / "fifo")
        check_contract(argv, folder, _files(folder))


# --- the regressions kept in tests/data/fuzz -------------------------------------------

# Each kept regression and the words its refusal must contain (where, and why).
KEPT = {"bad-imb-zero-repetitions.txt": ":37: repetitions: an integer from 1",
        "bad-json-inf.json": ":1: expected hopsim JSON with finite numbers (1e999",
        "bad-json-nan.json": ":1: expected hopsim JSON with finite numbers (NaN",
        "bad-json-ranks-absurd.json": ":1: ranks: an integer from 1 to 2147483647, got 1000000000000",
        "bad-json-ranks-negative.json": ":1: ranks: an integer from 1 to 2147483647, got -2",
        "bad-json-ranks-per-node-zero.json": ":1: ranks_per_node: an integer from 1",
        "bad-lc-negative.txt": ":8: lc_mean_us: a time >= 0 us, got -10.03366",
        "bad-osu-negative.txt": ":7: latency_us: a time > 0 us, got -4.52",
        "bad-osu-zero-latency.txt": ":3: latency_us: a time > 0 us, got 0.0",
        "bad-platform-deep.toml": ": TOML nested deeper than 16 levels",
        "bad-platform-name-path.toml": "'../../evil' cannot name a file"}


def test_every_kept_regression_has_its_expected_message():
    assert sorted(p.name for p in DATA.glob("bad-*")) == sorted(KEPT)


@pytest.mark.parametrize("name", sorted(KEPT))
def test_each_kept_bad_input_is_refused(name, tmp_path):
    path = DATA / name
    (tmp_path / path.name).write_text(path.read_text())
    if path.suffix == ".toml":
        argv = ["platforms", "export", path.name]
    else:
        argv = ["calibrate", path.name, "--base", "two-nodes", "--out", "fit.toml"]
    before = _files(tmp_path)
    assert check_contract(argv, tmp_path, before) == 2
    _, _, err = run(argv, tmp_path)
    assert KEPT[name] in err, err
