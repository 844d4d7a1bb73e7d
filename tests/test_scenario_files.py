"""Scenario files: parsing, sweep expansion order, linked axes, and their rejections."""
import re

import pytest

from hopsim import InputError, scenarios
from hopsim.scenarios import parse_scenario

BASE = 'platform = "two-nodes"\nworkload = "roundtrip"\n'


def parse(text: str):
    return parse_scenario(text, "s.toml")


def test_fixed_parameters_give_one_point_with_defaults():
    s = parse(BASE + "ranks = 2\nexchanges = 10\n")
    assert s.points() == [{"platform": "two-nodes", "workload": "roundtrip", "ranks": 2,
                           "ranks_per_node": 1, "seed": 1, "exchanges": 10}]
    assert s.swept_keys() == []


def test_cross_product_first_axis_outermost_values_in_written_order():
    s = parse(BASE + "[sweep]\nranks = [2, 1]\nreception = ['round-robin', 'any-source']\n")
    got = [(p["ranks"], p["reception"]) for p in s.points()]
    assert got == [(2, "round-robin"), (2, "any-source"), (1, "round-robin"), (1, "any-source")]
    assert s.swept_keys() == ["ranks", "reception"]


def test_linked_axis_sets_parameters_together():
    s = parse(BASE + "[sweep]\nseed = [1, 2]\n"
                     "placement = [{ranks = 2, ranks_per_node = 1}, {ranks = 1}]\n")
    got = [(p["seed"], p["ranks"], p["ranks_per_node"]) for p in s.points()]
    assert got == [(1, 2, 1), (1, 1, 1), (2, 2, 1), (2, 1, 1)]
    assert s.swept_keys() == ["ranks", "ranks_per_node", "seed"]


def test_any_parameter_can_be_swept_including_platform_and_workload():
    s = parse("ranks = 2\n[sweep]\nplatform = ['two-nodes', 'two-nodes']\n"
              "workload = ['roundtrip', 'exchange']\n")
    assert [p["workload"] for p in s.points()] == ["roundtrip", "exchange"] * 2
    sizes = parse(BASE.replace("roundtrip", "exchange") + "ranks = 2\n[sweep]\nsizes = [[0], [8, 16]]\n")
    assert [p["sizes"] for p in sizes.points()] == [[0], [8, 16]]


def test_expansion_is_the_same_every_time():
    text = BASE + "[sweep]\nranks = [1, 2]\nseed = [3, 1, 2]\n"
    assert parse(text).points() == parse(text).points()


@pytest.mark.parametrize("text, fragment", [
    ("platform = 'two-nodes'\nranks = 2\n", "s.toml: missing key workload"),
    (BASE, "s.toml: missing key ranks"),
    (BASE + "ranks = 2\ncolour = 1\n", "s.toml: unknown key colour"),
    (BASE + "ranks = 2\n[sweep]\ncolour = [1]\n", "s.toml: unknown key sweep.colour"),
    (BASE + "ranks = 2\n[sweep]\nx = [{colour = 1}]\n", "s.toml: unknown key sweep.x.colour"),
    (BASE + "ranks = 2\n[sweep]\nseed = []\n", "sweep.seed: must be a non-empty list"),
    (BASE + "ranks = 2\n[sweep]\nseed = 3\n", "sweep.seed: must be a non-empty list"),
    (BASE + "ranks = 2\n[sweep]\nx = [{seed = 1}, 2]\n", "sweep.x: mixes tables and plain values"),
    (BASE + "ranks = 2\n[sweep]\nx = [{}]\n", "sweep.x: an empty table sets nothing"),
    (BASE + "ranks = 2\n[sweep]\nranks = [1, 2]\n", "sweep.ranks: ranks is also set at top level"),
    (BASE + "[sweep]\nranks = [1]\nx = [{ranks = 2}]\n", "sweep.x: ranks is also swept by sweep.ranks"),
    (BASE + "ranks = 2\nsweep = 3\n", "sweep: must be a table"),
    (BASE + "ranks = 2\nname = 3\n", "name: must be a string"),
    (BASE + "ranks = [2\n", "s.toml: malformed TOML"),
])
def test_bad_scenarios_are_named(text, fragment):
    with pytest.raises(InputError, match=re.escape(fragment)):
        parse(text)


def test_points_are_checked_before_anything_runs():
    s = parse(BASE + "[sweep]\nranks = [2, 3]\n")
    with pytest.raises(InputError, match=re.escape("s.toml: point 2 (ranks=3): ranks: 3 ranks exceed")):
        scenarios.check(s)


def test_platform_files_resolve_against_the_scenario_folder(tmp_path):
    (tmp_path / "mine.toml").write_text(
        'name = "mine"\n[nodes]\ncount = 3\ncores = 1\n[network]\nlatency_us = 1\nbandwidth_gbps = 1\n')
    f = tmp_path / "study.toml"
    f.write_text('platform = "mine.toml"\nworkload = "roundtrip"\nranks = 3\n')
    s = scenarios.load(f)
    assert s.points()[0]["platform"] == "mine.toml"  # as written: outputs do not depend on where
    assert len(scenarios.check(s)) == 1


def test_missing_scenario_file():
    with pytest.raises(InputError, match="nothere.toml: cannot read scenario file"):
        scenarios.load("nothere.toml")


def test_the_default_scenario_is_valid():
    s = scenarios.default()
    assert s.description
    assert len(scenarios.check(s)) >= 2
