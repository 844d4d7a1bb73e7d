"""Bounds checked before anything runs: the issue's unbounded and late-checked inputs, each
one line and exit 2, no output left; outputs checked writable first; normal permissions."""
import errno
import os
import stat
import subprocess
import sys
import time

import pytest

import hopsim
import hopsim.scenarios
from hopsim import bounds, cli, platforms
from hopsim.scenarios import runner

PLATFORM = """\
name = "p"
[nodes]
count = 4
cores = 2
[network]
latency_us = 5.0
bandwidth_gbps = 10.0
"""


def hopsim_cli(*args, cwd=None, stdout=subprocess.PIPE):
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], cwd=cwd,
                          stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120)


def assert_one_line(proc, *fragments):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hopsim"), proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


SIM = ["simulate", "--platform", "two-nodes", "--workload", "roundtrip", "--ranks", 2]


@pytest.mark.parametrize("args, fragment", [
    (SIM + ["--request-bytes", 99999999999999999999], "request_bytes: must be at most 2^31-1"),
    (SIM + ["--overlay", "debruijn", "--degree", 99999999999], "degree: must be at most 2^31-1"),
    (SIM + ["--exchanges", 10000000000000], "exchanges: must be at most 2^31-1"),
    (SIM + ["--seed", 2**64], "seed: must be at most 2^64-1"),
    (["simulate", "--platform", "two-nodes", "--workload", "pingpong", "--ranks", 2,
      "--sizes", "0,4294967296"], "sizes: must be at most 2^31-1"),
    (["topology", "complete", "--ranks", 3000000000], "--ranks: must be at most 16384"),
    (["topology", "complete", "--ranks", 100000000], "--ranks: must be at most 16384"),
    (["topology", "debruijn", "--ranks", 67108864], "--ranks: must be at most 16384"),
    (["topology", "debruijn", "--ranks", 64, "--degree", 99999999999], "--degree: must be at most"),
    (["simulate", "--platform", "/dev/zero", "--workload", "pingpong", "--ranks", 2],
     "not a regular file"),
    # A run whose memory cannot fit: 2 ranks x 2^31-1 recorded round trips (64 GiB).
    (["simulate", "--platform", "two-nodes", "--workload", "roundtrip", "--ranks", 2,
      "--exchanges", 2**31 - 1], "this run needs about 128"),
])
def test_unbounded_inputs_are_one_line(args, fragment, tmp_path):
    assert_one_line(hopsim_cli(*args, cwd=tmp_path), fragment)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("key, value, fragment", [
    ("count", "99999999999", "nodes.count: must be at most 1048576"),
    ("latency_us", "1e-308", "network.latency_us: must be 0 or at least 0.001 us"),
    ("latency_us", "1e300", "network.latency_us: must be at most 3.6e+09 us"),
    ("bandwidth_gbps", "1e308", "network.bandwidth_gbps: must be at most"),
])
def test_platform_values_beyond_bounds(key, value, fragment, tmp_path):
    text = "\n".join(f"{key} = {value}" if line.startswith(f"{key} =") else line
                     for line in PLATFORM.splitlines())
    (tmp_path / "p.toml").write_text(text)
    assert_one_line(hopsim_cli("simulate", "--platform", "p.toml", "--workload", "pingpong",
                               "--ranks", 2, cwd=tmp_path), fragment)


@pytest.mark.parametrize("section, key, value", [("intranode", "bandwidth_gbps", "1e308"),
                                                 ("host", "pass_us", "1e300"),
                                                 ("intranode", "latency_us", "1e-308")])
def test_values_that_aborted_simgrid_or_the_formatter(section, key, value, tmp_path):
    (tmp_path / "p.toml").write_text(PLATFORM + f"[{section}]\n{key} = {value}\n")
    assert_one_line(hopsim_cli("simulate", "--platform", "p.toml", "--workload", "roundtrip",
                               "--ranks", 2, cwd=tmp_path), f"{section}.{key}")


def test_the_largest_accepted_latency_runs_and_formats(tmp_path):
    # 65536 us used to crash the formatter (no round trip under 1000 us).
    (tmp_path / "p.toml").write_text(PLATFORM.replace("latency_us = 5.0", "latency_us = 65536"))
    p = hopsim_cli("simulate", "--platform", "p.toml", "--workload", "roundtrip", "--ranks", 2,
                   "--exchanges", 2, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "average of average roundtrip latencies: 0.000000" in p.stdout


@pytest.mark.parametrize("kwargs", [dict(ranks=2**40), dict(request_bytes=10**20),
                                    dict(seed=-1), dict(exchanges=10**13),
                                    dict(overlay="debruijn", degree=10**11)])
def test_python_api_raises_input_error(kwargs):
    with pytest.raises(hopsim.InputError):
        hopsim.simulate("two-nodes", "roundtrip", **{"ranks": 2, **kwargs})


def test_huge_rank_counts_are_refused_with_the_estimate(tmp_path):
    (tmp_path / "p.toml").write_text(PLATFORM.replace("count = 4", "count = 1048576")
                                     .replace("cores = 2", "cores = 128"))
    p = hopsim_cli("simulate", "--platform", "p.toml", "--workload", "roundtrip", "--ranks",
                   10**8, "--ranks-per-node", 128, cwd=tmp_path)
    assert_one_line(p, "this run needs about", "ranks 100000000", "is available")


def test_memory_estimate_formula():
    mib = 2**20
    # 4096 ranks on 4096 nodes, 16 round trips, no overlay table.
    est = bounds.memory_estimate(4096, 4096, "roundtrip", exchanges=16)
    assert est == (bounds.BASE_BYTES + 4096 * bounds.PER_NODE_BYTES + 4096 * bounds.PER_RANK_BYTES
                   + 2 * 4096 * bounds.PER_IN_FLIGHT_BYTES + bounds.PER_SAMPLE_BYTES * 4096 * 16)
    # A random overlay adds its n x n table of 2-byte next hops.
    assert bounds.memory_estimate(4096, 4096, "roundtrip", 16, "random") - est == 2 * 4096**2
    with pytest.raises(hopsim.InputError, match="needs about .* MiB .* 50 MiB is available"):
        bounds.check_memory(4096, 4096, "roundtrip", 16, available=50 * mib)


def test_scenario_platform_that_is_not_a_string(tmp_path):
    (tmp_path / "s.toml").write_text('platform = 5\nworkload = "roundtrip"\nranks = 2\n')
    assert_one_line(hopsim_cli("run", "s.toml", "--out", "out", cwd=tmp_path),
                    "platform: must be a preset name or a platform file, got 5")


def test_every_points_overlay_size_is_checked_before_the_first_runs(tmp_path, monkeypatch):
    (tmp_path / "s.toml").write_text(
        'platform = "two-nodes"\nworkload = "roundtrip"\nexchanges = 2\n'
        "[platform_overrides]\nnodes = 64\n[sweep]\n"
        'case = [{overlay = "complete", ranks = 8}, {overlay = "kautz", degree = 2, ranks = 7}]\n')
    ran = []
    monkeypatch.setattr(hopsim.api, "simulate", lambda *a, **kw: ran.append(kw))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["run", "s.toml", "--out", "out"]) == 2
    assert ran == []
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("plot", ["/proc/x.png", "/sys/x.png"])
def test_plot_path_that_cannot_be_created_is_refused_before_running(plot, tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(hopsim.api, "simulate", lambda *a, **kw: ran.append(kw))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["run", "overlays", "--out", "out", "--plot", plot]) == 2
    assert ran == [] and not (tmp_path / "out").exists()


def test_out_that_cannot_be_created_is_refused_before_running(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(hopsim.api, "simulate", lambda *a, **kw: ran.append(kw))
    assert cli.main(["run", "--out", "/proc/hopsim-out"]) == 2
    assert ran == []


def test_a_full_disk_leaves_no_folder_behind(tmp_path, monkeypatch, capsys):
    def full(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    import hopsim.outputs

    monkeypatch.setattr(hopsim.outputs.tempfile, "mkstemp", full)
    # The disk fills during the run: the check before it (hopsim.outputs._probe) passed.
    monkeypatch.setattr(hopsim.outputs, "_probe", lambda *a: None)
    (tmp_path / "s.toml").write_text('platform = "two-nodes"\nworkload = "roundtrip"\n'
                                     "ranks = 2\nexchanges = 2\n")
    assert cli.main(["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "a" / "b")]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]


def test_results_files_have_normal_permissions(tmp_path):
    (tmp_path / "s.toml").write_text('platform = "two-nodes"\nworkload = "roundtrip"\n'
                                     "ranks = 2\nexchanges = 2\n")
    p = hopsim_cli("run", "s.toml", "--out", "out", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    mask = os.umask(0)
    os.umask(mask)
    for name in ("results.json", "results.csv"):
        mode = stat.S_IMODE((tmp_path / "out" / name).stat().st_mode)
        assert mode == 0o666 & ~mask, oct(mode)


@pytest.mark.parametrize("args", [["platforms"], SIM + ["--exchanges", 2],
                                  SIM + ["--exchanges", 2, "--json"]])
def test_stdout_on_dev_full_is_one_line(args):
    with open("/dev/full", "w") as full:
        p = hopsim_cli(*args, stdout=full)
    assert_one_line(p, "cannot write the output: No space left on device")


def test_out_that_is_a_file_is_refused_and_an_existing_folder_is_reused(tmp_path):
    (tmp_path / "s.toml").write_text('platform = "two-nodes"\nworkload = "roundtrip"\n'
                                     "ranks = 2\nexchanges = 2\n")
    (tmp_path / "file").write_text("x")
    assert_one_line(hopsim_cli("run", "s.toml", "--out", "file", cwd=tmp_path),
                    "--out file: exists and is not a folder")
    for _ in range(2):  # the second run writes into the folder the first made
        p = hopsim_cli("run", "s.toml", "--out", "out", cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        assert p.stdout.splitlines()[-1] == "wrote out/results.json and out/results.csv"


def test_a_reader_that_closes_early_is_not_an_error():
    # `hopsim platforms | head -c 0`: the pipe closes before hopsim writes.
    p = subprocess.Popen([sys.executable, "-m", "hopsim", "platforms"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 0 and err == "", err


@pytest.mark.parametrize("key", [k for k in bounds.BOUNDS if k != "seed"])
def test_each_bound_is_inclusive_at_both_ends(key):
    b = bounds.BOUNDS[key]
    typed = int if b.kind == "int" else float
    assert bounds.check(key, typed(b.high)) == b.high
    assert bounds.check(key, typed(b.low)) == b.low
    above = int(b.high) + 1 if b.kind == "int" else b.high * (1 + 1e-12)
    with pytest.raises(hopsim.InputError, match=f"{key}: must be at most"):
        bounds.check(key, above)
    if b.low > 0:
        below = int(b.low) - 1 if b.kind == "int" else b.low * (1 - 1e-12)
        with pytest.raises(hopsim.InputError, match=f"{key}: must be"):
            bounds.check(key, below)
    if b.zero:
        assert bounds.check(key, 0.0) == 0.0


def test_api_defaults_are_the_documented_ones():
    # hopsim.simulate and prepare: 2 ranks, 1 per node, seed 1 (the CLI's --seed default).
    _, work, _ = hopsim.prepare("two-nodes", "roundtrip")
    assert (work.ranks, work.ranks_per_node, work.seed) == (2, 1, 1)
    r = hopsim.simulate("two-nodes", "roundtrip", exchanges=2)
    assert (r.ranks, r.ranks_per_node, r.seed) == (2, 1, 1)


def test_an_os_error_names_its_file(tmp_path, monkeypatch, capsys):
    def refused(*a, **k):
        raise PermissionError(13, "Permission denied", str(tmp_path / "x"))

    monkeypatch.setattr(platforms, "list_presets", refused)
    assert cli.main(["platforms"]) == 2
    assert capsys.readouterr().err == f"hopsim: error: {tmp_path / 'x'}: Permission denied\n"
