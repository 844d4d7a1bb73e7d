"""The hopsim command as a user runs it: error paths, listings, outputs."""
import json
import subprocess
import sys

import pytest

from hopsim import platforms

GOOD = """\
name = "three"
[nodes]
count = 3
cores = 2
[network]
latency_us = 5.0
bandwidth_gbps = 10.0
"""


def hopsim(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def assert_input_error(proc, *fragments):
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def platform_file(tmp_path, text=GOOD):
    f = tmp_path / "platform.toml"
    f.write_text(text)
    return f


SIMULATE = ("simulate", "--workload", "roundtrip", "--exchanges", "5")


@pytest.mark.parametrize("args, fragments", [
    (["--platform", "nosuch", "--ranks", "2"], ["unknown platform 'nosuch'", "two-nodes"]),
    (["--platform", "missing.toml", "--ranks", "2"], ["missing.toml: cannot read platform file"]),
    (["--platform", "two-nodes", "--ranks", "3", "--ranks-per-node", "2"],
     ["ranks: 3 ranks are not divisible by ranks_per_node 2"]),
    (["--platform", "two-nodes", "--ranks", "4"], ["ranks: 4 ranks exceed the 2 cores"]),
    (["--platform", "two-nodes", "--ranks", "2", "--ranks-per-node", "2"],
     ["ranks_per_node: 2 ranks per node exceed the cores"]),
    (["--platform", "two-nodes", "--ranks", "-2"], ["ranks: must be at least 1"]),
    (["--platform", "two-nodes", "--ranks", "2", "--request-bytes", "-1"],
     ["request_bytes: must be at least 0"]),
    (["--platform", "two-nodes", "--ranks", "2", "--sizes", "1,2"],
     ["sizes: does not apply to the roundtrip workload"]),
    (["--platform", "two-nodes", "--ranks", "2", "--overlay", "ring"], ["overlay: must be one of"]),
    (["--platform", "two-nodes", "--ranks", "abc"], ["argument --ranks: invalid int value"]),
    (["--platform", "two-nodes", "--ranks", "2", "--sizes", "1,x"], ["argument --sizes"]),
    (["--platform", "two-nodes", "--ranks", "2", "--reception", "fifo"], ["argument --reception"]),
    (["--platform", "two-nodes"], ["the following arguments are required: --ranks"]),
])
def test_simulate_input_errors(args, fragments):
    assert_input_error(hopsim(*SIMULATE, *args), *fragments)


@pytest.mark.parametrize("edit, fragment", [
    (lambda t: t.replace("[nodes]", "[nodes"), "malformed TOML"),
    (lambda t: t + "[host]\ncolour = 1\n", "unknown key host.colour"),
    (lambda t: t.replace("latency_us = 5.0", "latency_us = -5.0"), "network.latency_us: must be >= 0"),
    (lambda t: t.replace("count = 3", "count = 0"), "nodes.count: must be at least 1"),
    (lambda t: t.replace("bandwidth_gbps = 10.0", "bandwidth_gbps = 0"), "network.bandwidth_gbps: must be > 0"),
])
def test_bad_platform_files(tmp_path, edit, fragment):
    f = platform_file(tmp_path, edit(GOOD))
    assert_input_error(hopsim(*SIMULATE, "--platform", f, "--ranks", "2"), str(f), fragment)


def test_unknown_command_and_no_command():
    assert hopsim("frobnicate").returncode == 2
    assert_input_error(hopsim(), "required")


def test_platforms_lists_every_preset_on_one_line_each():
    proc = hopsim("platforms")
    assert proc.returncode == 0 and proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert [line.split()[0] for line in lines] == platforms.list_presets()
    assert "2 nodes x 1 cores, 10 us, 1 Gbit/s" in lines[platforms.list_presets().index("two-nodes")]


BAD_SCENARIOS = {
    "malformed": ("platform = 'two-nodes'\nranks = [\n", "malformed TOML"),
    "unknown key": ("platform = 'two-nodes'\nworkload = 'roundtrip'\nranks = 2\ncolour = 1\n",
                    "unknown key colour"),
    "unknown preset": ("platform = 'nosuch'\nworkload = 'roundtrip'\nranks = 2\n",
                       "unknown platform 'nosuch'"),
    "too many ranks": ("platform = 'two-nodes'\nworkload = 'roundtrip'\nexchanges = 5\n"
                       "[sweep]\nranks = [2, 4]\n", "point 2 (ranks=4): ranks: 4 ranks exceed"),
}


@pytest.mark.parametrize("name", BAD_SCENARIOS)
def test_bad_scenarios_leave_no_output(tmp_path, name):
    text, fragment = BAD_SCENARIOS[name]
    f = tmp_path / "s.toml"
    f.write_text(text)
    out = tmp_path / "out"
    assert_input_error(hopsim("run", f, "--out", out), fragment)
    assert not out.exists()


def test_missing_scenario_file(tmp_path):
    assert_input_error(hopsim("run", tmp_path / "none.toml", "--out", tmp_path / "out"),
                       "cannot read scenario file")
    assert not (tmp_path / "out").exists()


def test_simulate_json_is_one_object_in_the_schema():
    proc = hopsim(*SIMULATE, "--platform", "two-nodes", "--ranks", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert list(doc) == ["platform", "platform_nodes", "platform_hash", "workload", "ranks",
                         "ranks_per_node", "seed", "simulated_seconds", "wall_seconds",
                         "messages", "results", "parameters"]
    assert doc["platform_nodes"] == 2  # presets/two-nodes.toml: [nodes] count = 2
    assert (doc["platform"], doc["workload"], doc["ranks"], doc["ranks_per_node"], doc["seed"]) == \
        ("two-nodes", "roundtrip", 2, 1, 1)
    assert proc.stdout.count("\n") == 1


def test_simulate_prints_the_tools_formats(tmp_path):
    f = platform_file(tmp_path)
    osu = hopsim("simulate", "--platform", f, "--workload", "pingpong", "--ranks", "2",
                 "--sizes", "0,8")
    assert osu.returncode == 0, osu.stderr
    assert osu.stdout.splitlines()[1:] == [
        "# Size            Latency (us)", "0                         5.00", "8                         5.01"]
    imb = hopsim("simulate", "--platform", f, "--workload", "exchange", "--ranks", "3",
                 "--sizes", "0")
    assert imb.returncode == 0, imb.stderr
    assert "# #processes = 3" in imb.stdout and "#bytes #repetitions" in imb.stdout
    lc = hopsim(*SIMULATE, "--platform", f, "--ranks", "6", "--ranks-per-node", "2",
                "--destinations", "shared")
    assert lc.returncode == 0, lc.stderr
    lines = lc.stdout.splitlines()
    assert lines[0] == "Rank 0 -> message size: 4000 bytes (-message-size 4000) exchanges: 5 (-exchanges 5)"
    assert [line.split(" ->")[0] for line in lines[1:7]] == [f"Rank {r}" for r in range(6)]
    assert lines[7].startswith("Rank 0 -> average of average roundtrip latencies: ")


def test_run_writes_results_and_prints_a_table(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text("platform = 'two-nodes'\nworkload = 'roundtrip'\nexchanges = 5\n"
                 "[sweep]\nranks = [1, 2]\n")
    proc = hopsim("run", f, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # progress only on a terminal
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["results.csv", "results.json"]
    header = next(line for line in proc.stdout.splitlines() if not line.startswith("#"))
    assert header.split() == ["ranks", "rtt_mean_us", "rtt_p99_us", "lc_average_of_averages_us",
                              "ray_average_for_all_ranks_us", "messages"]


def test_simulate_takes_the_tools_iteration_counts():
    ex = json.loads(hopsim("simulate", "--platform", "two-nodes", "--workload", "exchange",
                           "--ranks", "2", "--sizes", "0,1024", "--repetitions", "7",
                           "--json").stdout)
    assert [r["repetitions"] for r in ex["results"]["rows"]] == [7, 7]
    pp = hopsim("simulate", "--platform", "two-nodes", "--workload", "pingpong", "--ranks", "2",
                "--sizes", "8", "--iterations", "3")
    assert pp.returncode == 0 and pp.stdout.splitlines()[-1].startswith("8 ")


@pytest.fixture
def signal_handlers():
    # main() ignores further signals once it reports an interrupt; a child this pytest
    # process starts later would inherit SIGINT ignored and never see a terminal's ^C.
    import signal
    sigs = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    saved = [signal.getsignal(s) for s in sigs]
    yield
    for s, h in zip(sigs, saved):
        signal.signal(s, h)


class _InterruptedDescriptor:
    def __set_name__(self, owner, name):
        raise KeyboardInterrupt


def test_ctrl_c_inside_a_class_body_import_is_an_interrupt(monkeypatch, capsys,
                                                            signal_handlers):
    # Python 3.11 wraps what __set_name__ raises in a RuntimeError; a CI run's ^C landed
    # in matplotlib's _AxesBase that way (first import of hopsim.topologies) and printed
    # a traceback with status 1 instead of "interrupted" with 130.
    from hopsim import cli

    def build_parser(argv):
        class Axes:  # noqa: F841 (its creation is where ^C lands)
            get_xticks = _InterruptedDescriptor()
    monkeypatch.setattr(cli, "build_parser", build_parser)
    assert cli.main(["topology"]) == 130
    assert capsys.readouterr().err == "hopsim: interrupted\n"


def test_an_error_not_caused_by_ctrl_c_is_not_reported_as_one(monkeypatch, signal_handlers):
    from hopsim import cli

    def build_parser(argv):
        raise RuntimeError("a bug of ours")
    monkeypatch.setattr(cli, "build_parser", build_parser)
    with pytest.raises(RuntimeError, match="a bug of ours"):
        cli.main(["topology"])


def test_a_clean_up_failing_after_ctrl_c_is_still_an_interrupt(monkeypatch, capsys,
                                                               signal_handlers):
    # A clean-up that fails while a ^C unwinds (removing a half-written file) raises an
    # OSError whose context is the interrupt: the user pressed ^C, not a disk error.
    from hopsim import cli

    def build_parser(argv):
        try:
            raise KeyboardInterrupt
        finally:
            raise FileNotFoundError(2, "No such file or directory", "out/results.json")
    monkeypatch.setattr(cli, "build_parser", build_parser)
    assert cli.main(["topology"]) == 130
    assert capsys.readouterr().err == "hopsim: interrupted\n"
