"""What-if scenarios over overlays: platform overrides, the teaching claim, the plots."""
import subprocess
import sys

import pytest

from hopsim import InputError, platforms, scenarios
from hopsim.scenarios import parse_scenario

BASE = 'platform = "qdr-ib"\nworkload = "roundtrip"\nranks = 2\nexchanges = 2\n'

# The overlay comparison, small enough for a test: 64 ranks (4 nodes of the QDR preset).
SMALL = """\
name = "small-overlays"
description = "64 ranks"
platform = "qdr-ib"
workload = "roundtrip"
ranks = 64
ranks_per_node = 16
reception = "round-robin"
request_bytes = 4000
reply_bytes = 0
exchanges = 20
[sweep]
case = [{overlay = "complete"}, {overlay = "debruijn", degree = 4}, {overlay = "random"}]
"""


def hopsim(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_overrides_scale_the_platform_for_every_point():
    s = parse_scenario(BASE.replace("ranks = 2", "ranks = 2048\nranks_per_node = 16")
                       + "[platform_overrides]\nnodes = 128\npass_us = 0.5\n", "s.toml")
    assert s.platform_overrides == {"nodes": 128, "pass_us": 0.5}
    # 2048 ranks do not fit the preset's 64 nodes x 16 cores, but do fit 128 nodes.
    scenarios.check(s)
    args = scenarios.runner._call_args(s, s.points()[0])
    assert args["platform"].nodes == 128 and args["platform"].pass_us == 0.5
    assert args["platform"].latency_us == platforms.load("qdr-ib").latency_us
    assert '"platform_overrides": {' in scenarios.json_text(
        scenarios.Outcome(s, [], []))


def test_without_overrides_the_preset_is_too_small():
    s = parse_scenario(BASE.replace("ranks = 2", "ranks = 2048\nranks_per_node = 16"), "s.toml")
    with pytest.raises(InputError, match="exceed"):
        scenarios.check(s)


@pytest.mark.parametrize("table, fragment", [
    ("colour = 1", "s.toml: unknown key platform_overrides.colour (platform fields: nodes,"),
    ("name = 'x'", "unknown key platform_overrides.name"),
    ("nodes = 0", "point 1: platform_overrides: preset qdr-ib: nodes.count: must be at least 1"),
    ("pass_us = -1.0", "host.pass_us: must be >= 0"),
    ("reception = 'fifo'", "host.reception: must be one of"),
])
def test_bad_overrides_are_one_line_input_errors(table, fragment):
    with pytest.raises(InputError) as e:
        scenarios.check(parse_scenario(BASE + f"[platform_overrides]\n{table}\n", "s.toml"))
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_overrides_must_be_a_table():
    with pytest.raises(InputError, match="platform_overrides: must be a table"):
        parse_scenario(BASE.replace("ranks = 2", "platform_overrides = 3\nranks = 2"), "s.toml")


def test_round_robin_reception_makes_fewer_connections_beat_fewer_hops():
    """overlays.md: a round-robin rank waits about half a cycle of its connection list,
    so with a nonzero pass cost the sparse de Bruijn overlay beats the complete graph."""
    assert platforms.load("qdr-ib").pass_us > 0
    out = scenarios.run(parse_scenario(SMALL, "small.toml"))
    rtt = {p["overlay"]: r.results["rtt_us"]["mean"] for p, r in zip(out.points, out.results)}
    hops = {p["overlay"]: r.results["hops"]["mean"] for p, r in zip(out.points, out.results)}
    assert hops["debruijn"] > hops["complete"] == 1
    assert rtt["debruijn"] < rtt["complete"]
    # The same overlays probed with MPI_ANY_SOURCE: the one-hop complete graph wins again.
    any_source = scenarios.run(parse_scenario(SMALL.replace("round-robin", "any-source"), "a"))
    rtt = {p["overlay"]: r.results["rtt_us"]["mean"]
           for p, r in zip(any_source.points, any_source.results)}
    assert rtt["complete"] < rtt["debruijn"]


def test_packaged_scenarios_load_by_name_and_check():
    assert {"default", "overlays", "degree_sweep"} <= set(scenarios.list_packaged())
    for name in ("overlays", "degree_sweep"):
        s = scenarios.load(name)
        assert s.name == name
        scenarios.check(s)
    with pytest.raises(InputError, match="not a scenario file and not a packaged scenario"):
        scenarios.load("nosuch")


def test_run_plot_writes_a_png(tmp_path):
    f = tmp_path / "small.toml"
    f.write_text(SMALL)
    png = tmp_path / "small.png"
    proc = hopsim("run", f, "--out", tmp_path / "out", "--plot", png)
    assert proc.returncode == 0, proc.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {png}" in proc.stdout
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_degree_sweep_plot_writes_a_png(tmp_path):
    text = SMALL.replace('case = [{overlay = "complete"}, {overlay = "debruijn", degree = 4}, '
                         '{overlay = "random"}]',
                         'overlay = ["debruijn"]\ndegree = [2, 4, 8]')
    assert scenarios.figures.kind(parse_scenario(text, "d.toml")) == "overlays"
    text = 'plot = "degree"\n' + text
    out = scenarios.run(parse_scenario(text, "d.toml"))
    assert scenarios.figures.kind(out.scenario) == "degree"
    png = scenarios.plot(out, tmp_path / "d.png")
    assert png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("plot, fragment", [
    ("missing/dir/p.png", "does not exist"),
    ("p.svg", "give a file name ending in .png"),
    (".", "is a folder"),
    ("sub.png", "is a folder"),
])
def test_bad_plot_path_is_refused_before_running(tmp_path, plot, fragment):
    f = tmp_path / "small.toml"
    f.write_text(SMALL)
    (tmp_path / "sub.png").mkdir()
    proc = hopsim("run", f, "--out", "out", "--plot", plot, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and fragment in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.toml", "sub.png"]
    assert list((tmp_path / "sub.png").iterdir()) == []


def test_plot_key_is_checked():
    with pytest.raises(InputError, match="plot: must be one of '', 'overlays', 'degree'"):
        parse_scenario(BASE + 'plot = "pie"\n', "s.toml")


def test_plot_refuses_a_scenario_without_overlays(tmp_path):
    proc = hopsim("run", "--out", tmp_path / "out", "--plot", tmp_path / "p.png")
    assert proc.returncode == 2 and "not an overlay comparison" in proc.stderr
    assert list(tmp_path.iterdir()) == []
