"""What-if scenarios over overlays: platform overrides, the teaching claim, the plots, and
the overlay actually built in every result."""
import csv
import io
import json
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
    args = scenarios.sweep.call_args(s, s.points()[0])
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
    ("nodes = 0", "point 1: platform_overrides: nodes.count: must be at least 1, got 0 (given for "
                  "the platform of preset qdr-ib, not in that file)"),
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
    """docs/overlays.md: a round-robin rank waits about half a cycle of its connection list,
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


def test_a_degree_that_does_not_fit_stops_the_scenario_before_any_point_runs(tmp_path):
    f = tmp_path / "sweep.toml"
    f.write_text(SMALL.replace('case = [{overlay = "complete"}, {overlay = "debruijn", degree = 4}, '
                               '{overlay = "random"}]', 'overlay = ["debruijn"]\ndegree = [2, 3, 8]'))
    proc = hopsim("run", f, "--out", tmp_path / "out")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"hopsim: error: {f}: point 2 (degree=3, overlay=debruijn): overlay: "
                                  "debruijn: degree 3 does not fit 64 ranks;")
    assert "degrees that fit 64 ranks: 2, 4, 8" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_results_record_the_overlay_built(tmp_path):
    f = tmp_path / "built.toml"
    f.write_text(SMALL.replace("exchanges = 20", "exchanges = 2").replace("ranks = 64\n", "").replace(
        'case = [{overlay = "complete"}, {overlay = "debruijn", degree = 4}, {overlay = "random"}]',
        'case = [{overlay = "debruijn", ranks = 64}, {overlay = "debruijn", degree = 8, ranks = 64}, '
        '{overlay = "random", seed = "ray", ranks = 64}, {overlay = "kautz", ranks = 48}]'))
    proc = hopsim("run", f, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "overlay_built" in lines[2].split()
    # No degree: Ray's default 2 at 64 ranks is B(2,6); Kautz at 48 ranks: the largest d.
    for line, built in zip(lines[3:7], ["B(2,6)", "B(8,2)", "random(6)", "K(2,5)"]):
        assert built in line.split()
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    overlays = [p["result"]["results"]["overlay"] for p in doc["points"]]
    assert overlays[0] == {"family": "debruijn", "degree": 2, "digits": 6, "label": "de Bruijn B(2, 6)"}
    assert overlays[2]["label"] == "RayPlatform's random graph (mean degree 6)"
    assert overlays[3] == {"family": "kautz", "degree": 2, "digits": 5, "label": "Kautz K(2, 5)"}
    assert [p["result"]["seed"] for p in doc["points"]] == [1, 1, "ray", 1]
    csv_rows = list(csv.DictReader(io.StringIO((tmp_path / "out" / "results.csv").read_text())))
    assert [r["overlay_built"] for r in csv_rows] == ["B(2,6)", "B(8,2)", "random(6)", "K(2,5)"]


def test_seed_ray_routes_the_simulation_on_rayplatforms_random_graph():
    import hopsim

    p = platforms.load("two-nodes").replace(nodes=64)
    ray = hopsim.simulate(p, "roundtrip", ranks=64, exchanges=3, overlay="random", seed="ray")
    seeded = hopsim.simulate(p, "roundtrip", ranks=64, exchanges=3, overlay="random", seed=1)
    assert ray.seed == "ray" and ray.results["overlay"]["label"].startswith("RayPlatform's")
    # Same destinations (the workload's draws use seed 1), other graph and routes.
    assert ray.results["relays"] != seeded.results["relays"]
    with pytest.raises(InputError, match='seed: "ray" selects RayPlatform'):
        hopsim.simulate(p, "roundtrip", ranks=64, exchanges=3, overlay="debruijn", seed="ray")


def _row(family, ranks, rtt, degree=2):
    return {"family": family, "ranks": ranks, "degree": degree, "rtt": rtt, "hops": 2.0,
            "relays_mean": 5.0, "relays_sd": 1.0, "relays_max": 9}


def test_overlay_bars_are_grouped_per_family_and_labelled_at_their_centres():
    # Two rank counts for de Bruijn, one for Kautz: 2 slots of width 0.8 / 2 = 0.4, bar i
    # of family j centred at j + (i - 0.5) x 0.4: de Bruijn at -0.2 and 0.2, Kautz at 0.8.
    # A bar spans its centre -/+ 0.2; each value is printed above its bar's centre.
    from matplotlib.figure import Figure

    from hopsim.scenarios.figures import _overlay_figure

    fig = Figure()
    _overlay_figure(fig, [_row("debruijn", 64, 300.0), _row("kautz", 12, 100.0),
                          _row("debruijn", 16, 200.0)])
    rtt = fig.axes[0]
    bars = sorted((round(p.get_x(), 9), round(p.get_width(), 9), p.get_height())
                  for p in rtt.patches)
    assert bars == [(-0.4, 0.4, 200.0), (0.0, 0.4, 300.0), (0.6, 0.4, 100.0)]
    labels = sorted((round(t.xy[0], 9), t.get_text()) for t in rtt.texts)
    assert labels == [(-0.2, "200"), (0.2, "300"), (0.8, "100")]


def test_degree_ticks_merge_degrees_too_close_to_print_apart():
    # 64 is within 1.3 x 63 of the tick before it: the two share one tick "63/64"; 2 and 16 are far apart and keep their own.
    from matplotlib.figure import Figure

    from hopsim.scenarios.figures import _degree_figure

    fig = Figure()
    _degree_figure(fig, [_row("random", 64, 10.0, d) for d in (2, 16, 63, 64)])
    ax = fig.axes[0]
    assert list(ax.get_xticks()) == [2, 16, 63]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "16", "63/64"]
