"""The transport key (docs/model.md, "Transports"): the file key, the simulate() and CLI
overrides, their rejections, and the queue transport's closed forms from Python."""
import subprocess
import sys

import pytest

from hopsim import InputError, simulate
from hopsim.platforms import parse_platform

FILE = """\
name = "two-nodes"
[nodes]
count = 4
cores = 4
[network]
latency_us = 10.0
bandwidth_gbps = 1.0
"""


def test_the_file_key_reaches_the_engine():
    assert parse_platform(FILE, "t.toml").to_engine_dict()["transport"] == "flow"
    queue = parse_platform(FILE + 'transport = "queue"\n', "t.toml")
    assert queue.transport == "queue"
    assert queue.to_engine_dict()["transport"] == "queue"
    assert "queue transport" in queue.summary()


@pytest.mark.parametrize("extra, fragment", [
    ('transport = "fifo"\n', "network.transport: must be one of flow, queue"),
    ('transport = 1\n', "network.transport"),
    ('topology = "torus"\ntopology_parameters = "2,2"\ntransport = "queue"\n',
     "network.transport: \"queue\" runs on the star topology only"),
])
def test_bad_transports_are_refused_naming_the_key(extra, fragment):
    with pytest.raises(InputError) as info:
        parse_platform(FILE + extra, "t.toml")
    assert fragment in str(info.value)


def test_simulate_overrides_the_platform_and_both_give_the_closed_form():
    # One isolated message: L + s/R = 10 + 4096/125 us in both transports.
    platform = parse_platform(FILE, "t.toml")
    for transport in ("flow", "queue"):
        r = simulate(platform, "pingpong", ranks=2, sizes=[4096], iterations=3, transport=transport)
        assert r.results["rows"][0]["latency_us"] == pytest.approx(10 + 4096 / 125, abs=1e-9)
    with pytest.raises(InputError, match="network.transport"):
        simulate(platform, "pingpong", ranks=2, sizes=[0], transport="fifo")


def test_queue_results_are_deterministic_and_differ_from_flow_under_contention():
    platform = parse_platform(FILE, "t.toml")
    kw = dict(ranks=16, ranks_per_node=4, exchanges=20, seed=3)
    a = simulate(platform, "roundtrip", transport="queue", **kw)
    b = simulate(platform, "roundtrip", transport="queue", **kw)
    assert a.results == b.results and a.per_rank == b.per_rank
    flow = simulate(platform, "roundtrip", transport="flow", **kw)
    assert flow.results["rtt_us"]["mean"] != a.results["rtt_us"]["mean"]


def test_cli_transport_option(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(FILE, encoding="utf-8")
    run = [sys.executable, "-m", "hopsim", "simulate", "--platform", str(path), "--workload",
           "pingpong", "--ranks", "2", "--sizes", "0", "--json", "--transport"]
    ok = subprocess.run(run + ["queue"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert '"latency_us": 10.0' in ok.stdout or '"latency_us": 10' in ok.stdout
    bad = subprocess.run(run + ["fifo"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr
