"""simulate(trace=True) and `hopsim simulate --trace`: a row per transfer, with the dates
the engine used (checked against the closed forms of an uncontended link), the
rendezvous's three transfers in order, and the CLI's file rules."""
import csv
import io
import subprocess
import sys

import pytest

from hopsim import simulate
from hopsim.platforms import Platform

LATENCY_US = 5.0
GBPS = 1.0


def platform(**kw) -> Platform:
    return Platform(**{"name": "p", "nodes": 2, "cores": 1, "latency_us": LATENCY_US,
                       "bandwidth_gbps": GBPS, **kw})


def rows(result) -> list[dict]:
    cols = result.trace["columns"]
    return [dict(zip(cols, r)) for r in result.trace["rows"]]


@pytest.mark.parametrize("transport", ["flow", "queue"])
def test_each_data_row_takes_the_latency_plus_its_bytes_at_the_link_rate(transport):
    r = simulate(platform(transport=transport), "pingpong", sizes=[0, 1000, 100000], iterations=2,
                 trace=True)
    t = rows(r)
    assert len(t) == r.messages > 0
    for row in t:
        assert row["what"] == "data"
        assert {row["from"], row["to"]} == {0, 1}
        wire_us = LATENCY_US + row["bytes"] * 8 / (GBPS * 1e3)
        assert row["arrived_us"] - row["started_us"] == pytest.approx(wire_us, rel=1e-6)
        # No NIC stage on this platform: nothing waits before or after the link.
        assert row["started_us"] == pytest.approx(row["staged_us"], abs=1e-9)
        assert row["delivered_us"] == row["arrived_us"]
    assert sorted({row["bytes"] for row in t}) == [0, 1000, 100000]
    # A ping-pong alternates: every transfer is staged once the one before it arrived.
    for before, after in zip(t, t[1:]):
        assert after["from"] == before["to"]
        assert after["staged_us"] >= before["delivered_us"]


def test_a_rendezvous_is_a_request_an_answer_then_the_data():
    r = simulate(platform(eager_threshold_bytes=1024), "pingpong", sizes=[512, 4096],
                 iterations=1, trace=True)
    t = rows(r)
    small = [row for row in t if row["bytes"] == 512]
    assert small and all(row["what"] == "data" for row in small)
    big = [row for row in t if row["what"] != "data" or row["bytes"] == 4096]
    first = big[:3]
    assert [row["what"] for row in first] == ["request", "answer", "data"]
    request, answer, data = first
    assert (request["from"], request["to"], request["bytes"]) == (0, 1, 0)
    assert (answer["from"], answer["to"], answer["bytes"]) == (1, 0, 0)
    assert (data["from"], data["to"], data["bytes"]) == (0, 1, 4096)
    assert answer["staged_us"] >= request["delivered_us"]
    assert data["staged_us"] >= answer["delivered_us"]


def test_tracing_changes_nothing_simulated_and_is_deterministic():
    kw = dict(ranks=4, sizes=[65536], repetitions=3)
    plat = platform(nodes=4, bucket_gbps=0.5, bucket_burst_bytes=16384, eager_threshold_bytes=32768)
    a = simulate(plat, "exchange", trace=True, **kw)
    b = simulate(plat, "exchange", trace=True, **kw)
    plain = simulate(plat, "exchange", **kw)
    assert a.trace_csv() == b.trace_csv()
    assert a.results == plain.results and a.simulated_seconds == plain.simulated_seconds
    assert plain.trace is None
    with pytest.raises(ValueError, match="not traced"):
        plain.trace_csv()
    # The last transfer is delivered when the run ends.
    assert max(row["delivered_us"] for row in rows(a)) == pytest.approx(a.simulated_seconds * 1e6)


def hopsim(*args, cwd):
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


SIM = ("simulate", "--platform", "two-nodes", "--workload", "pingpong", "--ranks", "2", "--sizes", "8,4096",
       "--iterations", "2")


def test_cli_trace_writes_the_csv_beside_the_tools_output(tmp_path):
    p = hopsim(*SIM, "--trace", "run.csv", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "# OSU MPI Latency Test" in p.stdout
    table = list(csv.DictReader(io.StringIO((tmp_path / "run.csv").read_text())))
    assert table[0].keys() == {"staged_us", "started_us", "arrived_us", "delivered_us", "what",
                               "from", "to", "bytes", "seq"}
    assert {row["bytes"] for row in table} == {"8", "4096"}


@pytest.mark.parametrize("target, problem", [("missing/run.csv", "does not exist"),
                                             ("run.txt", "ending in .csv")])
def test_cli_trace_refuses_a_path_it_cannot_write_before_running(tmp_path, target, problem):
    p = hopsim(*SIM, "--trace", target, cwd=tmp_path)
    assert p.returncode == 2
    assert p.stdout == ""
    assert len(p.stderr.splitlines()) == 1 and "--trace" in p.stderr and problem in p.stderr
    assert list(tmp_path.iterdir()) == []
