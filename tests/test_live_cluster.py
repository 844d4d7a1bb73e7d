"""A real emulated cluster on this machine (namespaces, bridge, tbf) and its teardown.

Needs root, iproute2 and network namespaces; elsewhere these skip with the reason.
"""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from hopsim.live import cluster
from hopsim.live.mpirun import hopbench_path, run_live


def _namespaces_work() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    if not all(shutil.which(t) for t in ("ip", "tc", "unshare", "mpirun")):
        return "needs ip, tc, unshare and mpirun"
    if not hopbench_path().is_file():
        return "hopbench was not built (no MPI)"
    probe = f"hsmprobe{os.getpid()}"
    p = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None if p.returncode == 0 else f"cannot create network namespaces: {p.stderr.strip()}"


REASON = _namespaces_work()
pytestmark = pytest.mark.skipif(REASON is not None, reason=str(REASON))
RATE = "200mbit"
CAP_MBYTES = 200e6 / 8 / 1e6


def leftovers(tag=cluster.PREFIX):
    """Namespaces and links named from `tag`, and processes of live runs: mpirun and the
    ranks (their command line holds the installed hopbench's path) or the rsh agent
    (its path holds the tag). Other users' MPI programs do not count."""
    names = cluster.our_names(tag)
    pattern = f"{tag}|{hopbench_path()}"
    procs = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()
    procs = [p for p in procs if int(p) != os.getpid()]
    return names["namespaces"], names["links"], procs


@pytest.fixture
def clean_before_after():
    assert leftovers() == ([], [], []), "an emulated cluster or live run is still around"
    yield
    assert leftovers() == ([], [], [])


def test_two_host_pingpong_stays_under_the_link_cap(clean_before_after):
    burst = 32768
    result, text = run_live("pingpong", 2, emulate_cluster=2, link_rate=RATE, burst=burst,
                            sizes=[0, 1024, 1048576], iterations=20, timeout=90)
    rows = {r["bytes"]: r for r in result["results"]["rows"]}
    assert all(r["latency_us"] > 0 for r in rows.values())
    assert result["live"]["burst_bytes"] == burst
    # A 1 MiB message crosses a 200 Mbit/s tbf: the bucket (refilled while the reply
    # travels the other way) lets `burst` bytes through at once, the rest at the cap.
    s = 1048576
    bound = CAP_MBYTES * s / (s - burst)
    assert 0.3 * CAP_MBYTES < rows[s]["bandwidth_mbytes_per_sec"] < bound
    assert result["live"]["host_names"][0] != result["live"]["host_names"][1]
    assert text.startswith("# OSU MPI Latency Test")
    # The kernel's default congestion control, which the new namespaces inherited.
    assert result["live"]["congestion_control"] == _machine_congestion_control()


def test_four_rank_roundtrip_and_exchange_on_two_hosts(clean_before_after):
    rt, text = run_live("roundtrip", 4, 2, emulate_cluster=2, link_rate=RATE, exchanges=200,
                        oversubscribe=True, timeout=90)
    assert rt["per_rank"]["round_trips"] == [200] * 4
    assert rt["results"]["rtt_us"]["min"] >= 0 and rt["results"]["rtt_us"]["mean"] > 0
    assert rt["messages"] == 2 * 4 * 200
    assert "average of average roundtrip latencies" in text
    ex, text = run_live("exchange", 4, 2, emulate_cluster=2, link_rate=RATE,
                        sizes=[0, 65536, 1048576], repetitions=5, timeout=90)
    rows = {r["bytes"]: r for r in ex["results"]["rows"]}
    # Each host sends 2 ranks x 1 neighbour on the other host: 2 x 1 MiB through its cap.
    assert rows[1048576]["t_max_us"] > 2 * 1048576 / CAP_MBYTES * 0.9
    assert all(r["t_min_us"] > 0 for r in rows.values())
    assert "# Benchmarking Exchange" in text and "# #processes = 4" in text


def test_cyclic_and_rankfile_placements_run_as_recorded(clean_before_after, tmp_path):
    # --map-by node over 2 hosts: ranks 0, 2 on one host, 1, 3 on the other; each rank's
    # own hostname (hopbench reports it; every emulated host has its own) shows it ran so.
    ex, _ = run_live("exchange", 4, 2, emulate_cluster=2, link_rate=RATE, sizes=[0, 65536],
                     repetitions=5, placement="cyclic", timeout=90, out=str(tmp_path / "cyclic"))
    assert ex["live"]["mpirun"].endswith(" --map-by node " + str(hopbench_path())
                                         + " exchange --sizes 0,65536 --repetitions 5")
    assert ex["parameters"]["placement"] == "cyclic"
    assert ex["live"]["node_of_rank"] == [0, 1, 0, 1]
    names = ex["live"]["host_names"]
    assert names[0] == names[2] != names[1] == names[3]
    # The record is what a replay reads.
    from hopsim.calibration.parsers import parse_file
    ms = parse_file(str(tmp_path / "cyclic" / "result.json"))
    assert {dict(m.replay)["placement"] for m in ms} == {"cyclic"}
    # A rankfile: its own host names, mapped onto the emulated hosts in order of first
    # appearance (alpha: host 0, beta: host 1), given to mpirun as a rankfile.
    rankfile = tmp_path / "ranks"
    rankfile.write_text("rank 0=alpha slot=0\nrank 1=beta slot=0\nrank 2=beta slot=1\n"
                        "rank 3=alpha slot=1\n")
    ex, _ = run_live("exchange", 4, emulate_cluster=2, link_rate=RATE, sizes=[0],
                     repetitions=5, placement=str(rankfile), timeout=90)
    assert " --rankfile " in ex["live"]["mpirun"]
    assert ex["parameters"]["placement"] == ex["live"]["node_of_rank"] == [0, 1, 1, 0]
    assert ex["ranks_per_node"] == 2
    names = ex["live"]["host_names"]
    assert names[0] == names[3] != names[1] == names[2]


def _ranks_hosts(c, placement_args, ranks):
    """Run hopbench's 0-byte exchange with mpirun's own placement flags on cluster c;
    each rank's host index (from the hostname it reports)."""
    from contextlib import ExitStack
    from hopsim.live import result as live_result
    from hopsim.live.mpirun import _mpirun

    cmd = ["mpirun", "-np", str(ranks), "--oversubscribe", "--mca", "mpi_yield_when_idle", "1",
           *c.mpirun_args(), *placement_args, str(hopbench_path()), "exchange", "--sizes", "0",
           "--repetitions", "2"]
    with ExitStack() as stack:
        stdout, _, _ = _mpirun(cmd, 90, stack)
    hosts = live_result.parse_raw(stdout)["hosts"]
    names = [name for name, _ in c.hosts]
    return tuple(names.index(hosts[r]) for r in range(ranks))


def test_open_mpi_places_ranks_as_hopsim_reads_its_files(clean_before_after, tmp_path):
    # The same rankfile and hostfiles given to mpirun and to hopsim.placement: each rank's
    # reported host is the node hopsim's map gives it (nodes numbered as the file first
    # names them; host i of the cluster is address i).
    from hopsim.placement import read

    with cluster.EmulatedCluster(2, RATE) as c:
        a0, a1 = c.addresses()
        rankfile = tmp_path / "ranks"
        rankfile.write_text(f"rank 0={a1} slot=0\nrank 1={a0} slot=0\nrank 2={a1} slot=1\n"
                            f"rank 3={a1} slot=0-1\n")
        hostfile = tmp_path / "hosts"
        hostfile.write_text(f"{a0} slots=2\n{a1} slots=4\n")
        mine = read(rankfile.read_text(), "ranks", 4)
        assert mine.hosts == (a1, a0)
        ran = _ranks_hosts(c, ["--hostfile", str(hostfile), "--rankfile", str(rankfile)], 4)
        assert tuple(mine.hosts.index(c.addresses()[h]) for h in ran) == mine.node_map
        # --map-by slot fills a0's 2 slots first; --map-by node spreads 5 ranks 2 + 3
        # and ranks them round-robin (Open MPI 4.1's rmaps_rr_bynode).
        for policy, flag in (("block", "slot"), ("cyclic", "node")):
            expected = read(hostfile.read_text(), "hosts", 5, policy).node_map
            assert _ranks_hosts(c, ["--hostfile", str(hostfile), "--map-by", flag], 5) == expected


def _wait_for_namespaces(proc, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        ns, _, _ = leftovers()
        if ns and subprocess.run(["pgrep", "-f", "hopbench roundtrip"], capture_output=True).stdout:
            return ns
        if proc.poll() is not None:
            pytest.fail(f"the run ended early: {proc.stderr.read()}")
        time.sleep(0.1)
    pytest.fail("the emulated cluster never came up")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_killing_a_run_midway_leaves_nothing_behind(clean_before_after, sig):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    proc = subprocess.Popen([sys.executable, "-m", "hopsim", "live", "--emulate-cluster", "2",
                             "--link-rate", RATE, "--workload", "roundtrip", "--ranks", "2",
                             "--exchanges", "100000000", "--timeout", "120"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    _wait_for_namespaces(proc)
    time.sleep(0.5)  # mid-run: ranks are exchanging
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert out == ""
    assert leftovers() == ([], [], [])


def test_a_timeout_kills_the_run_and_tears_down(clean_before_after):
    start = time.time()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run([sys.executable, "-m", "hopsim", "live", "--emulate-cluster", "2",
                        "--link-rate", RATE, "--workload", "roundtrip", "--ranks", "2",
                        "--exchanges", "100000000", "--timeout", "4"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip().endswith("exceeded --timeout 4 s and was killed")
    assert len(p.stderr.strip().splitlines()) == 2  # the progress line, then the error
    assert time.time() - start < 40


def _machine_congestion_control() -> str:
    with open("/proc/sys/net/ipv4/tcp_congestion_control") as f:
        return f.read().strip()


# Connects from host 0 to host 1 and prints the connection's congestion control, as the
# kernel reports it to the socket (TCP_CONGESTION).
_CLIENT = """
import socket, sys, time
for _ in range(100):
    try:
        s = socket.create_connection((sys.argv[1], 5999), timeout=2)
        break
    except OSError:
        time.sleep(0.05)
print(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\\0")[0].decode())
"""
_SERVER = """
import socket, sys
s = socket.create_server((sys.argv[1], 5999))
s.settimeout(20)
c, _ = s.accept()
c.recv(1)
"""


def _connection_congestion_control(c) -> str:
    (_, a1) = c.hosts[1]
    server = subprocess.Popen(["ip", "netns", "exec", c.namespaces[1], sys.executable, "-c",
                               _SERVER, a1])
    try:
        out = subprocess.run(["ip", "netns", "exec", c.namespaces[0], sys.executable, "-c",
                              _CLIENT, a1], capture_output=True, text=True, timeout=30)
    finally:
        server.kill()
        server.wait()
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_the_hosts_tcp_congestion_control_is_the_one_asked_for(clean_before_after):
    default = _machine_congestion_control()
    with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
        other = next(a for a in f.read().split() if a != default)  # reno is always built in
    with cluster.EmulatedCluster(2, RATE, congestion_control=other) as c:
        assert c.congestion_control == other
        assert _connection_congestion_control(c) == other
    with cluster.EmulatedCluster(2, RATE) as c:
        assert c.congestion_control == default
        assert _connection_congestion_control(c) == default
    p = subprocess.run([sys.executable, "-m", "hopsim", "live", "--emulate-cluster", "2",
                        "--link-rate", RATE, "--congestion-control", "nosuchcc", "--workload",
                        "pingpong", "--ranks", "2"], capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.splitlines()) == 1 and "'nosuchcc' is not loaded" in p.stderr


def test_concurrent_clusters_get_distinct_names(clean_before_after):
    with cluster.EmulatedCluster(1, RATE) as a, cluster.EmulatedCluster(1, RATE) as b:
        assert a.tag != b.tag and a.subnet != b.subnet
        assert set(a.namespaces).isdisjoint(b.namespaces)
    assert leftovers() == ([], [], [])


def test_bad_link_rate_is_one_line(clean_before_after):
    p = subprocess.run([sys.executable, "-m", "hopsim", "live", "--emulate-cluster", "2",
                        "--link-rate", "fast", "--workload", "pingpong", "--ranks", "2"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.splitlines()) == 1 and "--link-rate" in p.stderr


@pytest.mark.parametrize("how, fragment", [("no-tools", "needs the 'ip' command"),
                                           ("not-root", "needs root")])
def test_without_root_or_iproute2_the_cluster_is_refused_in_one_line(tmp_path, how, fragment):
    cmd = [sys.executable, "-m", "hopsim", "live", "--emulate-cluster", "2", "--link-rate", RATE,
           "--workload", "pingpong", "--ranks", "2"]
    env = dict(os.environ)
    if how == "no-tools":
        env["PATH"] = str(tmp_path)  # an empty folder: no ip, tc, unshare, mpirun
    else:
        if shutil.which("setpriv") is None:
            pytest.skip("needs setpriv (util-linux) to drop root")
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert len(p.stderr.splitlines()) == 1 and fragment in p.stderr, p.stderr
