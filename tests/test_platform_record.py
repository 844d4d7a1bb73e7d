"""smpi and live results name the platform they ran as simulate's do: its name, its node
count and a hash of its content, so that a result can be traced to its platform."""
import hashlib
import json
import shutil
import socket
import subprocess
import sys

import pytest

from hopsim.live.mpirun import hopbench_path, live_platform
from hopsim.errors import InputError

needs_smpi = pytest.mark.skipif(shutil.which("smpirun") is None or shutil.which("smpicc") is None,
                                reason="SimGrid's SMPI (smpicc, smpirun) is not installed")
needs_mpi = pytest.mark.skipif(shutil.which("mpirun") is None or not hopbench_path().is_file(),
                               reason="Open MPI or the built hopbench is missing")

TWO_NODES = """\
name = "two-nodes"
[nodes]
count = 3
cores = 4
[network]
latency_us = 10.0
bandwidth_gbps = 1.0
"""


def hopsim(*args, cwd=None):
    p = subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], capture_output=True,
                       text=True, timeout=300, cwd=cwd)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.splitlines()[-1])


@needs_smpi
def test_smpi_result_names_the_platform_its_node_count_and_hash(tmp_path):
    # The same name with other values (a file that calls itself two-nodes, latency 10 us
    # and 1 Gbit/s as the preset but 3 nodes of 4 cores, not 2 of 1): same name, its own
    # node count and hash.
    (tmp_path / "other.toml").write_text(TWO_NODES)
    run = ("smpi", "--workload", "pingpong", "--ranks", 2, "--sizes", "0", "--iterations", 5,
           "--json")
    preset = hopsim(*run, "--platform", "two-nodes")
    again = hopsim(*run, "--platform", "two-nodes")
    other = hopsim(*run, "--platform", "other.toml", cwd=tmp_path)
    assert preset["platform"] == other["platform"] == "two-nodes"
    assert preset["platform_nodes"] == 2  # presets/two-nodes.toml: [nodes] count = 2
    assert other["platform_nodes"] == 3
    assert other["platform_hash"] != preset["platform_hash"]
    assert again["platform_hash"] == preset["platform_hash"]
    # and the hash is the one simulate records for the same platform
    sim = hopsim("simulate", "--platform", "two-nodes", "--workload", "pingpong", "--ranks", 2,
                 "--sizes", "0", "--iterations", 5, "--json")
    assert sim["platform_hash"] == preset["platform_hash"]
    assert list(preset)[:3] == ["platform", "platform_nodes", "platform_hash"]


def _sha16(content: dict) -> str:
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:16]


def test_live_platform_of_an_emulated_cluster():
    p = live_platform(4, "100mbit", 16384, None, 2)
    assert p == {"platform": "live:emulated-4x100mbit", "platform_nodes": 4,
                 "platform_hash": _sha16({"burst_bytes": 16384, "emulated_hosts": 4,
                                          "link_rate": "100mbit"})}
    # every part of the cluster's shape changes the hash, not the cores of this machine
    hashes = {live_platform(*a)["platform_hash"] for a in [
        (4, "100mbit", 16384, None, 2), (3, "100mbit", 16384, None, 2),
        (4, "1gbit", 16384, None, 2), (4, "100mbit", 32768, None, 2)]}
    assert len(hashes) == 4
    assert live_platform(4, "100mbit", 16384, None, 64) == p


def test_live_platform_of_a_hostfile_counts_its_hosts_and_hashes_its_text(tmp_path):
    hf = tmp_path / "hosts"
    hf.write_text("alpha slots=2\nbeta slots=2\n# a comment\ngamma slots=2\n")
    p = live_platform(None, None, None, str(hf), 2)
    assert p["platform"] == "live:hosts" and p["platform_nodes"] == 3
    assert p["platform_hash"] == _sha16({"hostfile": hf.read_text()})
    hf.write_text("alpha slots=2\nbeta slots=4\n# a comment\ngamma slots=2\n")
    assert live_platform(None, None, None, str(hf), 2)["platform_hash"] != p["platform_hash"]
    with pytest.raises(InputError, match="cannot read --hostfile"):
        live_platform(None, None, None, str(tmp_path), 2)


def test_live_platform_of_this_machine():
    p = live_platform(None, None, None, None, 8)
    assert p == {"platform": "live:localhost", "platform_nodes": 1,
                 "platform_hash": _sha16({"cores": 8, "host": socket.gethostname()})}
    assert live_platform(None, None, None, None, 4)["platform_hash"] != p["platform_hash"]


@needs_mpi
def test_live_result_records_its_platform(tmp_path):
    doc = hopsim("live", "--workload", "pingpong", "--ranks", 2, "--sizes", "0",
                 "--iterations", 20, "--json", "--out", tmp_path / "o")
    import os
    assert doc["platform"] == "live:localhost" and doc["platform_nodes"] == 1
    assert doc["platform_hash"] == _sha16({"cores": os.cpu_count(), "host": socket.gethostname()})
    assert json.loads((tmp_path / "o" / "result.json").read_text())["platform_hash"] == doc["platform_hash"]
    # a third-party tool's result names it too
    osu = shutil.which("osu_latency")
    if osu:
        tool = hopsim("live", "--tool", "osu", "--workload", "pingpong", "--ranks", 2, "--json")
        assert tool["platform_hash"] == doc["platform_hash"]
