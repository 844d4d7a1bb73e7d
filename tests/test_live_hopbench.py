"""hopbench's logic: its routes are the engine's, its message counts are the engine's, the
statistics of live runs follow the tools' source, and its outputs read back.

Timing itself cannot be checked against closed forms on a real machine; these tests run
hopbench on this machine's shared memory (2 ranks) or as a single process.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import hopsim
from hopsim import topologies
from hopsim.live import result as live_result, routes as live_routes
from hopsim.live.mpirun import hopbench_path
from hopsim.errors import InputError

needs_mpi = pytest.mark.skipif(shutil.which("mpirun") is None or not hopbench_path().is_file(),
                               reason="Open MPI (mpirun) or the hopbench binary is not installed")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def mpirun(np_, *args, timeout=120):
    cmd = ["mpirun", "-np", str(np_), "--oversubscribe", "--mca", "btl", "self,vader",
           str(hopbench_path()), *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=timeout)
    assert p.returncode == 0, p.stderr
    return p.stdout


def hopsim_cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=ENV)


# -- routes ---------------------------------------------------------------------------

@needs_mpi
@pytest.mark.parametrize("family, ranks, degree", [
    ("complete", 5, 0), ("debruijn", 16, 2), ("debruijn", 27, 3), ("kautz", 12, 0),
    ("random", 20, 0), ("group", 24, 0)])
def test_hopbench_walks_exactly_the_engines_routes(tmp_path, family, ranks, degree):
    table = live_routes.write(tmp_path / "routes.txt", family, ranks, degree, seed=4)
    out = mpirun(1, "routes", "--routes", table, "--ranks", ranks)
    walked = {}
    for line in out.splitlines():
        if line.startswith("path "):
            f = list(map(int, line.split()[1:]))
            walked[(f[0], f[1])] = f[2:]
    engine = topologies.build_overlay(family, ranks, degree, seed=4)
    assert len(walked) == ranks * ranks
    for s in range(ranks):
        for d in range(ranks):
            assert walked[(s, d)] == engine.route(s, d), (s, d)
    conns, _ = live_routes.read(table)
    assert all(conns[r] == engine.connection_list(r) for r in range(ranks))


@needs_mpi
def test_a_networkx_graph_is_walked_as_the_engine_routes_it(tmp_path):
    import networkx as nx

    G = nx.circulant_graph(9, [1, 3])
    (tmp_path / "g.txt").write_text(live_routes.table(live_routes.build(G, 9, seed=2)))
    out = mpirun(1, "routes", "--routes", tmp_path / "g.txt", "--ranks", 9)
    engine = topologies.from_networkx(G, seed=2)
    walked = [list(map(int, l.split()[3:])) for l in out.splitlines() if l.startswith("path ")]
    assert walked == [engine.route(s, d) for s in range(9) for d in range(9)]


@pytest.mark.parametrize("family", ["polytope", "hypercube", "torus"])
def test_load_balanced_families_are_refused_for_live_runs(family):
    with pytest.raises(InputError, match="load counters"):
        live_routes.build(family, 16)


def test_cli_refuses_a_dynamic_overlay_in_one_line():
    p = hopsim_cli("live", "--workload", "roundtrip", "--ranks", "2", "--overlay", "torus")
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.splitlines()) == 1 and "load counters" in p.stderr


def test_more_polling_ranks_than_cores_is_refused_without_oversubscribe():
    ranks = (os.cpu_count() or 1) + 2
    p = hopsim_cli("live", "--workload", "roundtrip", "--ranks", ranks, "--exchanges", "10")
    assert p.returncode == 2, p.stderr
    assert "--oversubscribe" in p.stderr and len(p.stderr.splitlines()) == 1


# -- message counts -------------------------------------------------------------------

@needs_mpi
def test_pingpong_and_exchange_send_as_many_messages_as_the_engine():
    sizes = [0, 1024, 65536]
    raw = live_result.parse_raw(mpirun(2, "pingpong", "--sizes", "0,1024,65536", "--iterations", 50))
    sim = hopsim.simulate("two-nodes", "pingpong", ranks=2, sizes=sizes, iterations=50)
    assert raw["messages"] == sim.messages == 2 * 50 * len(sizes)
    assert [r[0] for r in raw["pingpong"]] == sizes
    raw = live_result.parse_raw(mpirun(3, "exchange", "--sizes", "0,4096", "--repetitions", 7))
    plat = hopsim.platforms.Platform(name="three", nodes=3, cores=1, latency_us=1, bandwidth_gbps=1)
    sim = hopsim.simulate(plat, "exchange", ranks=3, sizes=[0, 4096], repetitions=7)
    assert raw["messages"] == sim.messages == 3 * 2 * 7 * 2
    assert all(len(times) == 3 for _, _, times in raw["exchange"])


@needs_mpi
@pytest.mark.parametrize("reception", ["any-source", "round-robin"])
def test_routed_round_trips_count_one_transfer_per_hop(tmp_path, reception):
    # Every request and reply arrives once; every other transfer is a relay.
    table = live_routes.write(tmp_path / "r.txt", "debruijn", 4, 2)
    raw = live_result.parse_raw(mpirun(4, "roundtrip", "--exchanges", 30, "--routes", table,
                                       "--reception", reception, "--reply-bytes", 0))
    assert all(len(raw["rtt"][r]) == 30 for r in range(4))
    assert raw["messages"] == 2 * 4 * 30 + sum(raw["relays"])
    assert sum(raw["relays"]) > 0  # B(2,2): some pairs are two hops apart


@needs_mpi
def test_unrouted_round_trips_send_a_request_and_a_reply_each():
    raw = live_result.parse_raw(mpirun(2, "roundtrip", "--exchanges", 40, "--destinations", "shared"))
    assert raw["messages"] == 2 * 2 * 40 and raw["relays"] == [0, 0]
    assert all(v >= 0 for r in raw["rtt"].values() for v in r)


# -- figures from injected timings: tests/test_live_result.py (no MPI run) --------


# -- outputs --------------------------------------------------------------------------

@needs_mpi
def test_live_pingpong_prints_the_osu_table_and_simulates_shape(tmp_path):
    p = hopsim_cli("live", "--workload", "pingpong", "--ranks", 2, "--sizes", "0,1024",
                   "--iterations", 100, "--out", tmp_path / "o")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("# OSU MPI Latency Test")
    assert re.fullmatch(r"0 {9}\s*\d+\.\d\d", lines[2]) and len(lines[2]) == 30
    doc = json.loads(lines[-1])
    sim = hopsim.simulate("two-nodes", "pingpong", ranks=2, sizes=[0, 1024]).to_dict()
    assert list(doc)[:len(sim)] == list(sim)  # simulate's keys in its order
    assert [r["bytes"] for r in doc["results"]["rows"]] == [0, 1024]
    assert all(r["latency_us"] > 0 for r in doc["results"]["rows"])
    saved = json.loads((tmp_path / "o" / "result.json").read_text())
    assert saved == doc
    assert (tmp_path / "o" / "mpirun.cmd").read_text().startswith(shutil.which("mpirun"))


@needs_mpi
def test_live_roundtrip_prints_latency_checker_lines_and_ray_file(tmp_path):
    p = hopsim_cli("live", "--workload", "roundtrip", "--ranks", 2, "--exchanges", 50,
                   "--out", tmp_path / "o", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["per_rank"]["round_trips"] == [50, 50]
    assert len(doc["per_rank"]["lc_mode_us"]) == 2
    ray = (tmp_path / "o" / "NetworkTest.txt").read_text().splitlines()
    assert ray[2].startswith("# AverageForAllRanks: ")
    assert ray[4].split("\t")[0] == "0" and ray[4].split("\t")[4] == "50"
    text = (tmp_path / "o" / "output.txt").read_text().splitlines()
    assert re.fullmatch(r"Rank 1 -> mode roundtrip latency: \d+ microseconds, average roundtrip "
                        r"latency: \d+\.\d{6} microseconds", text[2])


@needs_mpi
def test_live_exchange_prints_the_imb_block(tmp_path):
    p = hopsim_cli("live", "--workload", "exchange", "--ranks", 2, "--sizes", "0,1024",
                   "--repetitions", 20)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[1] == "# Benchmarking Exchange" and lines[2] == "# #processes = 2"
    assert lines[4].split() == ["#bytes", "#repetitions", "t_min[usec]", "t_max[usec]",
                                "t_avg[usec]", "Mbytes/sec"]
    rows = lines[5:7]
    assert all(len(r) == 78 for r in rows)
    assert [int(r[:13]) for r in rows] == [0, 1024]
    assert [int(r[13:26]) for r in rows] == [20, 20]
    assert all(0 < float(r[26:39]) <= float(r[39:52]) for r in rows)


@pytest.mark.parametrize("args, fragment", [
    (["--tool", "netpipe", "--workload", "roundtrip", "--ranks", "2"], "measures pingpong"),
    (["--tool", "imb", "--workload", "exchange", "--ranks", "2", "--tool-path", "/nonexistent"],
     "--tool-path"),
    (["--workload", "pingpong", "--ranks", "2", "--link-rate", "200mbit"], "--emulate-cluster"),
    (["--workload", "pingpong", "--ranks", "2", "--hostfile", "/nonexistent"], "--hostfile"),
    (["--workload", "pingpong", "--ranks", "2", "--timeout", "0"], "--timeout"),
    (["--workload", "pingpong", "--ranks", "3"], "exactly 2 ranks"),
])
def test_live_bad_input_is_one_line_and_exit_2(tmp_path, args, fragment):
    p = hopsim_cli("live", *args, "--out", tmp_path / "o")
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.splitlines()) == 1 and fragment in p.stderr, p.stderr
    assert not (tmp_path / "o").exists()


def test_without_a_built_hopbench_live_runs_are_refused(monkeypatch, tmp_path):
    from hopsim.live import mpirun

    monkeypatch.setattr(mpirun, "hopbench_path", lambda: tmp_path / "missing" / "hopbench")
    with pytest.raises(InputError, match="hopbench was not built"):
        mpirun.run_live("pingpong", 2, sizes=[0])


@needs_mpi
def test_mca_parameters_reach_mpirun_and_the_result(tmp_path):
    # An eager limit below the largest size: the run must take it (Open MPI would refuse
    # an unknown value type), and the result must say what ran.
    env = dict(ENV, OMPI_MCA_btl_vader_single_copy_mechanism="none")
    p = subprocess.run([sys.executable, "-m", "hopsim", "live", "--workload", "pingpong",
                        "--ranks", "2", "--sizes", "0,100000", "--iterations", "20",
                        "--mca", "btl_tcp_eager_limit", "4096", "--mca", "btl", "self,vader",
                        "--json"], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    live = json.loads(p.stdout.splitlines()[-1])["live"]
    assert " --mca btl_tcp_eager_limit 4096 --mca btl self,vader " in live["mpirun"]
    assert live["mca"] == {"btl_tcp_eager_limit": "4096", "btl": "self,vader"}
    assert live["mca_environment"]["OMPI_MCA_btl_vader_single_copy_mechanism"] == "none"


@pytest.mark.parametrize("name, value, message", [
    ("bad name", "1", "--mca: expected an Open MPI parameter name (letters, digits, _), got 'bad name'"),
    ("btl", "", "--mca btl: expected a value on one line, got ''")])
def test_a_bad_mca_parameter_is_one_line_exit_2_before_any_run(tmp_path, name, value, message):
    p = hopsim_cli("live", "--workload", "pingpong", "--ranks", 2, "--mca", name, value,
                   "--out", tmp_path / "o")
    assert p.returncode == 2 and p.stderr == f"hopsim: error: {message}\n" and p.stdout == ""
    assert not (tmp_path / "o").exists()
