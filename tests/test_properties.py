"""Property tests (hypothesis) over the platform and scenario parsers, the Python API and
the CLI argument space, with valid, invalid and extreme values. The property everywhere:
a result, or an InputError of one line (exit status 2 from the CLI); never another
exception, never a traceback, never an output folder left by a refused run.

Examples per test (derandomized, so CI runs the same ones every time): platform files 300,
scenario files 200, the Python API 300, CLI argument lists 200, 1000 in all; the whole
file runs in about 30 s here. Simulations are not run (a run of generated size could take
hours): the engine call is replaced by a sentinel raised once everything before it passed,
so the property covers every check up to the engine, and tests elsewhere run the engine.
"""
import string
import tomllib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hopsim
from hopsim import bounds, cli, platforms
from hopsim.platforms.platform import FILE_KEYS
from hopsim.scenarios import scenario as scenario_module

SETTINGS = dict(deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


class Ran(BaseException):
    """The engine was reached: every check before it passed."""


# simulator/spec.hpp's field types: what the bindings cast each dict value to.
INT32 = (-2**31, 2**31 - 1)
INT64 = (-2**63, 2**63 - 1)
SPEC_INTS = {"nodes": INT32, "cores": INT32, "ranks": INT32, "ranks_per_node": INT32,
             "degree": INT32, "seed": (0, 2**64 - 1), "iterations": INT64,
             "repetitions": INT64, "request_bytes": INT64, "reply_bytes": INT64,
             "exchanges": INT64, "sizes": INT64}


def assert_engine_types(*specs):
    """Every value fits the C++ field it is cast to, and every double is finite."""
    import math

    for spec in specs:
        for key, value in spec.items():
            values = value if isinstance(value, list) and key == "sizes" else [value]
            for v in values:
                if key in SPEC_INTS:
                    lo, hi = SPEC_INTS[key]
                    assert isinstance(v, int) and lo <= v <= hi, (key, v)
                elif isinstance(v, float):
                    assert math.isfinite(v), (key, v)


@pytest.fixture
def no_engine(monkeypatch):
    from hopsim import _engine

    def reached(platform, workload):
        assert_engine_types(platform, workload)
        raise Ran()
    monkeypatch.setattr(_engine, "simulate", reached)


# --- values ------------------------------------------------------------------------------

EXTREME_INTS = st.sampled_from([0, 1, -1, 2, 2**31 - 1, 2**31, 2**63 - 1, 2**63, 2**64 - 1,
                                2**64, -2**63, 10**20, 99999999999])
EXTREME_FLOATS = st.sampled_from([0.0, -0.0, 1e-308, 5e-324, 1e308, 1e300, 65536.0, 1e-3,
                                  1e-9, -1e-9, 3.6e9, 3.7e9, 1e6, 1e-6])
TOML_SCALARS = st.one_of(
    st.integers(-2**63, 2**63 - 1), EXTREME_INTS.filter(lambda i: -2**63 <= i < 2**63),
    st.floats(allow_nan=True, allow_infinity=True), EXTREME_FLOATS, st.booleans(),
    st.text(string.printable, max_size=12),
    st.sampled_from(["star", "torus", "fat-tree", "dragonfly", "any-source", "round-robin",
                     "4,4", "2;4,4;1,2;1,2", "3,4;4,3;5,1;2", "1,1,1", "0", "-1,2", ""]))
VALUES = st.one_of(TOML_SCALARS, st.lists(TOML_SCALARS, max_size=3))


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") \
            .replace("\r", "\\r").replace("\t", "\\t") + '"'
    if isinstance(v, list):
        return "[" + ", ".join(map(toml_value, v)) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def one_line(e: Exception) -> bool:
    return isinstance(e, hopsim.InputError) and "Traceback" not in str(e) and str(e).strip()


# --- platform files ------------------------------------------------------------------------

PLATFORM_KEYS = list(FILE_KEYS.values())
GOOD_PLATFORM = {"name": "g", "nodes.count": 4, "nodes.cores": 2, "network.latency_us": 5.0,
                 "network.bandwidth_gbps": 10.0}


def platform_text(values: dict) -> str:
    top, sections = [], {}
    for key, v in values.items():
        if "." in key:
            sec, sub = key.split(".", 1)
            sections.setdefault(sec, []).append(f"{sub} = {toml_value(v)}")
        else:
            top.append(f"{key} = {toml_value(v)}")
    return "\n".join(top + [f"[{s}]\n" + "\n".join(lines) for s, lines in sections.items()]) + "\n"


platform_docs = st.builds(
    lambda base, changes, drop: {k: v for k, v in {**base, **changes}.items() if k not in drop},
    st.just(GOOD_PLATFORM),
    st.dictionaries(st.sampled_from(PLATFORM_KEYS + ["nodes.speed", "bogus", "host.gap"]),
                    st.one_of(st.floats(0, 1e4), st.integers(1, 64), VALUES), max_size=2),
    # Mostly nothing dropped: a missing required key is one message, tested often enough.
    st.one_of(*[st.just(set())] * 4, st.sets(st.sampled_from(list(GOOD_PLATFORM)), max_size=1)))


@settings(max_examples=300, **SETTINGS)
@given(doc=platform_docs)
def test_platform_parser_gives_a_platform_or_one_line(doc):
    text = platform_text(doc)
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return  # a generated string TOML itself rejects; the parser's message is tested elsewhere
    try:
        p = platforms.parse_platform(text, "gen.toml")
    except hopsim.InputError as e:
        assert one_line(e) and "\n" not in str(e).strip(), str(e)
        return
    # A platform that exists is within every bound and the engine's types.
    assert_engine_types(p.to_engine_dict())
    for field, key in FILE_KEYS.items():
        v = p.effective(field) if field.startswith("intra") else getattr(p, field)
        if key in bounds.BOUNDS and v is not None:  # None: an optional key left absent
            assert bounds.check(key, v) == v


# --- the Python API ------------------------------------------------------------------------

API_INTS = st.one_of(st.integers(-3, 40), EXTREME_INTS)
api_calls = st.fixed_dictionaries(
    {"platform": st.sampled_from(platforms.list_presets() + ["nope", "/dev/zero", "/nonexistent.toml"]),
     "workload": st.sampled_from(["pingpong", "roundtrip", "exchange", "bogus"]),
     "ranks": API_INTS, "ranks_per_node": API_INTS, "seed": API_INTS},
    optional={"request_bytes": API_INTS, "reply_bytes": API_INTS, "exchanges": API_INTS,
              "iterations": API_INTS, "repetitions": API_INTS, "degree": API_INTS,
              "sizes": st.lists(API_INTS, max_size=3),
              "overlay": st.sampled_from(["complete", "debruijn", "kautz", "random", "torus",
                                          "hypercube", "group", "polytope", "nope", 5]),
              "destinations": st.sampled_from(["independent", "shared", "x"]),
              "reception": st.sampled_from(["any-source", "round-robin", None, 3])})


@settings(max_examples=300, **SETTINGS)
@given(call=api_calls)
def test_prepare_accepts_or_raises_input_error(call):
    call = dict(call)
    try:
        plat, work, spec = hopsim.prepare(call.pop("platform"), call.pop("workload"), **call)
    except hopsim.InputError as e:
        assert one_line(e), str(e)
        return
    # Accepted: every number the engine gets is within the engine's types.
    assert_engine_types(spec, work.to_engine_dict())
    assert 1 <= work.ranks <= bounds.INT32_MAX and 0 <= work.seed <= bounds.UINT64_MAX
    assert all(0 <= s <= bounds.INT32_MAX for s in work.sizes)
    assert bounds.memory_estimate(plat.nodes, work.ranks, work.kind, work.exchanges,
                                  work.overlay) <= bounds.available_memory()


# --- scenario files ------------------------------------------------------------------------

SCENARIO_KEYS = ["platform", "workload", "ranks", "ranks_per_node", "seed", "reception",
                 "exchanges", "request_bytes", "degree", "overlay", "sizes", "bogus"]
scenario_docs = st.fixed_dictionaries(
    {"top": st.dictionaries(st.sampled_from(SCENARIO_KEYS), st.one_of(
        VALUES, st.sampled_from(["two-nodes", "qdr-ib", "roundtrip", "pingpong", "debruijn",
                                 "kautz", "complete"]), st.integers(1, 64)), max_size=6),
     "sweep": st.dictionaries(st.sampled_from(SCENARIO_KEYS + ["case"]), st.one_of(
         st.lists(st.one_of(st.integers(-2, 64), EXTREME_INTS), max_size=3),
         st.lists(st.dictionaries(st.sampled_from(["ranks", "degree", "overlay"]),
                                  st.one_of(st.integers(0, 70), st.sampled_from(["kautz", "debruijn", "complete"])),
                                  max_size=3), max_size=3),
         VALUES), max_size=2),
     "overrides": st.dictionaries(st.sampled_from(["nodes", "cores", "pass_us", "latency_us", "name"]),
                                  st.one_of(st.integers(-1, 300), EXTREME_INTS, EXTREME_FLOATS),
                                  max_size=2)})


def scenario_text(doc) -> str:
    lines = [f"{k} = {toml_value(v)}" for k, v in doc["top"].items()]
    if doc["overrides"]:
        lines.append("[platform_overrides]")
        lines += [f"{k} = {toml_value(v)}" for k, v in doc["overrides"].items()]
    if doc["sweep"]:
        lines.append("[sweep]")
        lines += [f"{k} = {toml_value(v)}" for k, v in doc["sweep"].items()]
    return "\n".join(lines) + "\n"


@settings(max_examples=200, **SETTINGS)
@given(doc=scenario_docs)
def test_scenario_parse_and_check_accept_or_raise_input_error(doc):
    from hopsim import scenarios

    text = scenario_text(doc)
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return
    try:
        s = scenario_module.parse_scenario(text, "gen.toml")
        scenarios.check(s)
    except hopsim.InputError as e:
        assert one_line(e), str(e)


# --- the CLI -------------------------------------------------------------------------------

CLI_INTS = st.one_of(st.integers(-3, 64), EXTREME_INTS).map(str)
FLAG_VALUES = {
    "--platform": st.sampled_from(["two-nodes", "qdr-ib", "ec2-10gbe", "nope", "/dev/zero", "/proc"]),
    "--workload": st.sampled_from(["pingpong", "roundtrip", "exchange", "x"]),
    "--ranks": CLI_INTS, "--ranks-per-node": CLI_INTS, "--request-bytes": CLI_INTS,
    "--reply-bytes": CLI_INTS, "--exchanges": CLI_INTS, "--degree": CLI_INTS, "--seed": CLI_INTS,
    "--sizes": st.lists(CLI_INTS, min_size=1, max_size=3).map(",".join),
    "--overlay": st.sampled_from(["complete", "debruijn", "kautz", "random", "x"]),
    "--reception": st.sampled_from(["any-source", "round-robin", "x"]),
    "--destinations": st.sampled_from(["independent", "shared", "x"]),
}
simulate_argv = st.lists(st.sampled_from(list(FLAG_VALUES)), max_size=8, unique=True).flatmap(
    lambda flags: st.tuples(*[st.tuples(st.just(f), FLAG_VALUES[f]) for f in flags])).map(
    lambda pairs: ["simulate"] + [x for pair in pairs for x in pair])
topology_argv = st.tuples(
    st.sampled_from(["complete", "debruijn", "kautz", "random", "hypercube", "x"]),
    st.one_of(st.integers(-2, 40), st.integers(16385, 2**70)).map(str),
    st.one_of(st.integers(-1, 8), EXTREME_INTS).map(str)).map(
    lambda t: ["topology", t[0], "--ranks", t[1], "--degree", t[2]])
run_argv = st.sampled_from([["run", "nope"], ["run", "/dev/zero"], ["run", "--plot", "x.txt"],
                            ["run", "--plot", "/proc/x.png"], ["run", "--out", "/proc/o"],
                            ["run", "default", "--plot", "x.png"], ["platforms", "extra"], []])


@settings(max_examples=200, **SETTINGS)
@given(argv=st.one_of(simulate_argv, topology_argv, run_argv))
def test_cli_is_a_result_or_one_line_and_exit_2(argv, no_engine, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    try:
        status = cli.main(argv)
    except Ran:
        return  # every check passed; the run itself is not part of this property
    except SystemExit as e:  # argparse: --help or a usage error
        status = e.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if status == 0:
        return
    assert status == 2, (argv, status, err)
    lines = err.splitlines()
    assert len(lines) == 1 or (lines and lines[0].startswith("usage:")
                               and lines[-1].startswith("hopsim")), (argv, err)
    assert not (tmp_path / "out").exists()


# --- the bounds are registered and documented ------------------------------------------------

def test_every_numeric_platform_key_has_bounds():
    p = platforms.load_preset("two-nodes")
    for field, key in FILE_KEYS.items():
        v = p.effective(field) if field.startswith("intra") else getattr(p, field)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            assert key in bounds.BOUNDS, (
                f"{key} has no bounds: add one line for it to BOUNDS in python/bounds.py")


def test_docs_bounds_table_matches_the_bounds_module():
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "platforms.md").read_text()
    assert bounds.markdown_table() in doc, (
        "docs/platforms.md's bounds table is stale: regenerate it with "
        "`.venv/bin/python -m hopsim.bounds`")
