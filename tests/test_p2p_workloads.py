"""osu_bw (bandwidth), IMB PingPing and IMB Sendrecv: closed forms with host costs, the
tools' text read back by hopsim's own parsers, and validate turning the real files'
rows into cases (docs/workloads.md, docs/validation.md).

Notation as tests/test_closed_forms.py: L = latency_us, S(s) = s*8/(gbps*1000) us, o_s and
o_r the send and receive overheads, b the per-byte overhead in us. pass_us = 0.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

import hopsim
from hopsim import formats
from hopsim.calibration.parsers import parse_file, parse_text
from hopsim.calibration.validate import cases_of, validate
from hopsim.errors import InputError
from hopsim.platforms import Platform

DATA = Path(__file__).parent / "data"
TOL = 2e-3


def platform(**kw) -> Platform:
    base = dict(name="p2p", nodes=4, cores=2, latency_us=20.0, bandwidth_gbps=1.0)
    base.update(kw)
    return Platform(**base)


def S(s, gbps=1.0):
    return s * 8 / (gbps * 1000)


def test_bandwidth_window_bound_by_the_send_overhead():
    # o_s = 100 us > S(10000) = 80 us: each of the 64 sends crosses alone, the k-th
    # leaving at k*o_s and taken by rank 1 at k*o_s + L + S(s) + o_r. The pass that takes
    # the 64th sends the 4-byte ack (o_s), which rank 0 takes L + S(4) + o_r later:
    #     window = 65 o_s + 2 o_r + 2 L + S(s) + S(4) = 6500 + 6 + 40 + 80 + 0.032.
    # Swapping o_s and o_r gives 65*3 + 200 + ... , far below (the link would then bound).
    p = platform(nodes=2, send_overhead_us=100.0, recv_overhead_us=3.0)
    row = hopsim.simulate(p, "bandwidth", ranks=2, sizes=[10000], iterations=3).results["rows"][0]
    window = 65 * 100 + 2 * 3 + 2 * 20 + S(10000) + S(4)
    assert row["window_us"] == pytest.approx(window, abs=TOL)
    assert row["bandwidth_mbytes_per_sec"] == pytest.approx(64 * 10000 / window, rel=1e-9)
    assert (row["window"], row["iterations"]) == (64, 3)


def test_bandwidth_of_a_long_window_tends_to_the_link_rate():
    # Zero host costs: window = 2 L + S(64 s) + S(4), so MB/s = 64 s / window, below
    # 125 MB/s (1 Gbit/s) by the two latencies and the ack only.
    p = platform(nodes=2)
    rows = hopsim.simulate(p, "bandwidth", ranks=2, sizes=[1, 1 << 20], window=8,
                           iterations=2).results["rows"]
    for row in rows:
        s = row["bytes"]
        assert row["window_us"] == pytest.approx(40 + S(8 * s) + S(4), abs=TOL)
    assert 124 < rows[1]["bandwidth_mbytes_per_sec"] < 125


def test_pingping_on_a_full_duplex_link_is_the_one_way_pingpong_time():
    # Each rank posts its send (o_s + b s), the message crosses (L + S), the other rank
    # receives it (o_r + b s): both directions at once, neither shares a link. That is
    # osu_latency's half round trip, term for term.
    p = platform(nodes=2, send_overhead_us=7.0, recv_overhead_us=3.0, per_byte_overhead_ns=0.25)
    for s in (0, 4096, 65536):
        t = hopsim.simulate(p, "pingping", ranks=2, sizes=[s], repetitions=5).results["rows"][0]
        half = hopsim.simulate(p, "pingpong", ranks=2, sizes=[s], iterations=5).results["rows"][0]
        expect = 7 + 3 + 2 * 0.25e-3 * s + 20 + S(s)
        assert t["t_us"] == pytest.approx(expect, abs=TOL)
        assert half["latency_us"] == pytest.approx(expect, abs=TOL)


def test_sendrecv_counts_two_messages_per_rank_in_its_bandwidth():
    # 4 single-rank nodes, one message per NIC direction: t = o_s + L + S(s) + o_r on
    # every rank; IMB's Mbytes/sec is 2 s / t_max.
    p = platform(send_overhead_us=2.0, recv_overhead_us=1.0)
    row = hopsim.simulate(p, "sendrecv", ranks=4, sizes=[65536], repetitions=4).results["rows"][0]
    t = 2 + 20 + S(65536) + 1
    for k in ("t_min_us", "t_max_us", "t_avg_us"):
        assert row[k] == pytest.approx(t, abs=TOL)
    assert row["mbytes_per_sec"] == pytest.approx(2 * 65536 / row["t_max_us"], rel=1e-12)


@pytest.mark.parametrize("kind, params, message", [
    ("bandwidth", dict(ranks=4), "exactly 2 ranks"),
    ("pingping", dict(ranks=3), "exactly 2 ranks"),
    ("bandwidth", dict(ranks=2, window=0), "window"),
    ("bandwidth", dict(ranks=2, window=1001), "window"),
    ("pingping", dict(ranks=2, window=8), "does not apply"),
    ("sendrecv", dict(ranks=4, iterations=8), "does not apply"),
])
def test_bad_parameters_name_themselves(kind, params, message):
    with pytest.raises(InputError, match=message):
        hopsim.simulate(platform(), kind, **params)


def test_default_sizes_are_the_tools_sweeps():
    from hopsim.workload import make_workload

    assert make_workload("bandwidth", 2).sizes[0] == 1  # osu_bw starts at 1 byte
    assert make_workload("bandwidth", 2).sizes[-1] == 4 << 20
    assert make_workload("pingping", 2).sizes[0] == 0  # IMB starts at 0
    assert make_workload("bandwidth", 2).window == 64


@pytest.mark.parametrize("kind, ranks, params, stats", [
    ("bandwidth", 2, dict(sizes=[1, 8192, 65536], iterations=3), ("bandwidth_mbytes_per_sec",)),
    ("pingping", 2, dict(sizes=[0, 1024, 65536], repetitions=3), ("t_us", "mbytes_per_sec")),
    ("sendrecv", 4, dict(sizes=[0, 1024, 65536], repetitions=3),
     ("t_min_us", "t_max_us", "t_avg_us", "mbytes_per_sec")),
])
def test_tool_text_reads_back_through_the_calibration_parsers(kind, ranks, params, stats):
    r = hopsim.simulate(platform(send_overhead_us=1.5), kind, ranks=ranks, **params)
    ms = parse_text(formats.text(r), "sim.txt")
    assert {m.workload for m in ms} == {kind}
    got = {(m.size, m.statistic): m.value for m in ms}
    for row in r.results["rows"]:
        for stat in stats:
            assert got[(row["bytes"], stat)] == round(row[stat], 2)
    assert all(m.ranks == ranks for m in ms)


@pytest.mark.parametrize("kind, ranks, params", [
    ("bandwidth", 2, dict(sizes=[1, 4096, 65536], iterations=3, window=16)),
    ("pingping", 2, dict(sizes=[0, 1024, 65536], repetitions=5)),
    ("sendrecv", 4, dict(ranks_per_node=2, sizes=[0, 1024, 65536], repetitions=5)),
])
def test_hopsim_output_validated_on_its_own_platform_has_no_error(tmp_path, kind, ranks, params):
    p = platform(send_overhead_us=1.5, recv_overhead_us=0.5)
    r = hopsim.simulate(p, kind, ranks=ranks, **params)
    f = tmp_path / "sim.json"
    f.write_text(r.to_json())
    report = validate(p, [str(f)])
    assert len(report.cases) == len(params["sizes"])
    assert {c.workload for c in report.cases} == {kind}
    assert report.max_abs_error_pct < 1e-9


def test_real_osu_bw_file_compares_the_time_per_message():
    path = DATA / "osu" / "osu_bw-7.4-tcp.txt"
    ms = parse_file(path)
    cases, skipped = cases_of(ms)
    assert len(cases) == len(ms) and not skipped
    for c, m in zip(cases, ms):
        assert c.workload == "bandwidth" and c.ranks == 2 and c.statistic == "us_per_message"
        assert c.measured_us == pytest.approx(m.size / m.value)
        assert c.run["window"] == 64
    report = validate(platform(nodes=2), [str(path)])
    for c in report.cases:
        # osu_bw's own formula on the simulated window: bytes x window / window time.
        row = hopsim.simulate(platform(nodes=2), "bandwidth", ranks=2, sizes=[c.bytes],
                              iterations=c.run["iterations"]).results["rows"][0]
        assert c.simulated_us == pytest.approx(c.bytes / row["bandwidth_mbytes_per_sec"], rel=1e-9)
    d = report.to_dict()["cases"][0]
    assert d["measured_mbytes_per_sec"] == pytest.approx(ms[0].value)


def test_a_zero_bandwidth_row_is_listed_not_compared(tmp_path):
    f = tmp_path / "bw.txt"
    f.write_text("# OSU MPI Bandwidth Test v5.8\n# Size      Bandwidth (MB/s)\n"
                 "1                       0.00\n2                       0.01\n")
    cases, skipped = cases_of(parse_file(f))
    assert [c.bytes for c in cases] == [2]
    assert "0.00 MB/s" in skipped[0][2]


def test_validate_cli_gives_pingping_and_sendrecv_rows_of_the_real_imb_file():
    p = subprocess.run([sys.executable, "-m", "hopsim", "validate", "--platform", "two-nodes",
                        "--nodes", "4", str(DATA / "imb" / "IMB-MPI1-p2p-np4-tcp.txt"), "--json"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    seen = {(c["workload"], c["ranks"]) for c in doc["cases"]}
    assert {("pingping", 2), ("sendrecv", 2), ("sendrecv", 4)} <= seen
    # 18 sizes per block: PingPong, PingPing, Sendrecv x 2, Exchange x 2.
    assert len(doc["cases"]) == 6 * 18
    assert not any("pingping t_us" in n["what"] or "sendrecv t_avg_us" in n["what"]
                   for n in doc["not_simulated"])


@pytest.mark.parametrize("kind, ranks, name", [("pingping", 2, "PingPing"),
                                               ("sendrecv", 2, "Sendrecv")])
def test_imb_blocks_are_laid_out_as_the_real_file(kind, ranks, name):
    # The rules, title and column header of the block in IMB 2021.11's own output (the
    # real file pads the title with a space and notes the waiting ranks; hopsim has none).
    real = (DATA / "imb" / "IMB-MPI1-p2p-np4-tcp.txt").read_text().splitlines()
    at = real.index(f"# Benchmarking {name} ")
    block = [l for l in real[at - 1:at + 5] if "additional processes" not in l]
    r = hopsim.simulate(platform(), kind, ranks=ranks, sizes=[0, 65536], repetitions=2)
    mine = formats.text(r).splitlines()
    assert mine[:5] == [block[0], block[1].rstrip(), block[2].rstrip(), block[3], block[4]]
    assert all(len(l) == len(block[4]) for l in mine[4:])


def test_osu_bw_table_layout():
    r = hopsim.Result(platform="p", workload="bandwidth", ranks=2, ranks_per_node=1, seed=1,
                      simulated_seconds=0.5, wall_seconds=0.1, messages=10, per_rank={},
                      parameters={}, results={"rows": [
                          {"bytes": 1, "window": 64, "iterations": 100, "window_us": 20.5,
                           "bandwidth_mbytes_per_sec": 3.1219},
                          {"bytes": 4194304, "window": 64, "iterations": 20,
                           "window_us": 2.1e6, "bandwidth_mbytes_per_sec": 124.996}]})
    assert formats.text(r).splitlines() == [
        f"# OSU MPI Bandwidth Test v{formats.OSU_VERSION}",
        "# Size        Bandwidth (MB/s)",  # "%-*s%*s", 10, "# Size", 20, "Bandwidth (MB/s)"
        "1                         3.12",
        "4194304                 125.00",
    ]


@pytest.mark.parametrize("tool, path, kind, ranks, keys", [
    ("imb", "imb/IMB-MPI1-p2p-np4-tcp.txt", "sendrecv", 4,
     {"bytes", "repetitions", "t_min_us", "t_max_us", "t_avg_us", "mbytes_per_sec"}),
    ("imb", "imb/IMB-MPI1-p2p-np4-tcp.txt", "pingping", 2,
     {"bytes", "repetitions", "t_us", "mbytes_per_sec"}),
    ("imb", "imb/IMB-MPI1-p2p-np4-tcp.txt", "pingpong", 2,
     {"bytes", "latency_us", "bandwidth_mbytes_per_sec"}),
    ("osu", "osu/osu_bw-7.4-tcp.txt", "bandwidth", 2,
     {"bytes", "window", "iterations", "window_us", "bandwidth_mbytes_per_sec"}),
])
def test_live_osu_and_imb_results_are_read_by_the_calibration_parsers(tool, path, kind, ranks, keys):
    # A live run's raw output (here a real one of this machine) becomes simulate's rows,
    # and that JSON validates like a simulated one: one case per printed size.
    from hopsim.live.mpirun import _interpret
    from hopsim.workload import make_workload

    stdout = (DATA / path).read_text()
    work = make_workload(kind, ranks)
    text, out = _interpret(tool, stdout, {}, work, "live:localhost", work.parameters(), 1.0, {})
    assert text == stdout
    rows = out["results"]["rows"]
    measured = [m for m in parse_text(stdout, "raw", tool) if m.workload == kind and m.ranks == ranks]
    assert len(rows) == len({m.size for m in measured}) > 0
    assert all(set(r) == keys for r in rows)
    cases, _ = cases_of(parse_text(json.dumps(out), "live.json"))
    assert {c.workload for c in cases} == {kind} and len(cases) == len(rows)
    if kind == "bandwidth":
        assert rows[-1]["window_us"] == pytest.approx(rows[-1]["bytes"] * 64 / rows[-1]["bandwidth_mbytes_per_sec"])
        assert all(c.run["window"] == 64 for c in cases)


@pytest.mark.parametrize("trial", [1, 2, 3])
@pytest.mark.parametrize("folder, tool, kind, ranks", [
    ("imb-pingping-2x200mbit", "imb", "pingping", 2),
    ("imb-sendrecv-4x200mbit", "imb", "sendrecv", 4),
    ("osu_bw-2x200mbit", "osu", "bandwidth", 2)])
def test_kept_live_runs_reread_to_their_json(folder, tool, kind, ranks, trial):
    # The live runs docs/workloads.md reports: their raw output, read again, gives the
    # results their result.json holds.
    from hopsim.live.mpirun import _interpret
    from hopsim.workload import make_workload

    run = DATA / "live" / f"{folder}-t{trial}"
    kept = json.loads((run / "result.json").read_text())
    work = make_workload(kind, ranks, sizes=kept["parameters"]["sizes"])
    _, out = _interpret(tool, (run / f"{tool}.stdout").read_text(), {}, work, kept["platform"],
                        kept["parameters"], 1.0, {})
    assert out["results"] == kept["results"]
    assert len(kept["results"]["rows"]) == 21 + (kind != "bandwidth")


@pytest.mark.parametrize("transport", ["flow", "queue"])
@pytest.mark.parametrize("kind, ranks, params", [
    ("bandwidth", 2, dict(sizes=[1, 65536], iterations=3, window=8)),
    ("pingping", 2, dict(sizes=[0, 65536], repetitions=20)),
    ("sendrecv", 4, dict(sizes=[0, 65536], repetitions=20))])
def test_noisy_runs_follow_the_seed_on_both_transports(transport, kind, ranks, params):
    p = platform(noise_scope="message", noise_median_us=5.0, noise_sigma=0.5)
    runs = [hopsim.simulate(p, kind, ranks=ranks, seed=s, transport=transport, **params).results
            for s in (3, 3, 4)]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_live_latency_checker_results_are_read_by_its_parser():
    # A real latency_checker run of this machine (tests/data/latency_checker, with its
    # command): the live JSON carries its figures and validates as a round trip.
    from hopsim.live.mpirun import _interpret
    from hopsim.workload import make_workload

    stdout = (DATA / "latency_checker" / "lc-np4-tcp.txt").read_text()
    work = make_workload("roundtrip", 4, request_bytes=4000, reply_bytes=4000, exchanges=2000,
                         destinations="shared")
    text, out = _interpret("latency_checker", stdout, {}, work, "live:localhost",
                           work.parameters(), 1.0, {})
    assert text == stdout
    res = out["results"]
    assert res["lc_average_of_averages_us"] == pytest.approx(45.718654)
    assert len(res["lc_mean_us"]) == len(res["lc_mode_us"]) == 4
    assert res["lc_mean_us"][0] == pytest.approx(46.22063)
    cases, _ = cases_of(parse_text(json.dumps(out), "live.json"))
    (case,) = cases
    assert case.workload == "roundtrip" and case.ranks == 4 and case.bytes == 4000
    assert case.measured_us == pytest.approx(45.718654)


def test_imbs_pingpong_is_read_as_osu_latencys_rows():
    # IMB PingPong's t[usec] is half the round trip, as osu_latency's latency; the rate
    # is bytes over it in 10^6 B/s: 1 B in 70.60 us is 1 / 70.60 = 0.01416 MB/s (IMB
    # prints 0.01).
    from hopsim.live.mpirun import _interpret
    from hopsim.workload import make_workload

    stdout = (DATA / "imb" / "IMB-MPI1-pingpong-timeout-np2-100mbit.txt").read_text()
    work = make_workload("pingpong", 2)
    _, out = _interpret("imb", stdout, {}, work, "live:localhost", work.parameters(), 1.0, {})
    rows = {r["bytes"]: r for r in out["results"]["rows"]}
    assert rows[1] == {"bytes": 1, "latency_us": 70.60,
                       "bandwidth_mbytes_per_sec": pytest.approx(0.0141643, rel=1e-5)}
    assert rows[0]["bandwidth_mbytes_per_sec"] == 0.0


def test_netpipes_output_file_is_read_into_rows():
    # NetPIPE writes its table to np.out, not stdout; read by the calibration parser, the
    # live result holds one row per size it measured, in its order.
    from hopsim.live.mpirun import _interpret
    from hopsim.workload import make_workload

    raw = (DATA / "netpipe" / "np37-tcp.out").read_text()
    expected = [m for m in parse_text(raw, "np.out", "netpipe") if m.workload == "pingpong"]
    work = make_workload("pingpong", 2)
    _, out = _interpret("netpipe", "", {"np.out": raw}, work, "live:localhost",
                        work.parameters(), 1.0, {})
    rows = out["results"]["rows"]
    sizes = list(dict.fromkeys(m.size for m in expected))
    assert [r["bytes"] for r in rows] == sizes and len(rows) > 10


def test_a_tool_path_must_be_an_executable_file(tmp_path):
    from hopsim.live.mpirun import _find_tool

    script = tmp_path / "osu_latency"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(InputError, match="is not an executable file"):
        _find_tool("osu", str(script), "pingpong")
    script.chmod(0o755)
    assert _find_tool("osu", str(script), "pingpong") == str(script.resolve())


def test_live_runs_pass_the_loop_counts_each_tool_takes():
    # osu's -i and -x set the small and the large messages' counts alike (osu_util.c);
    # under -i alone osu keeps its own warm-up, which hopsim's explicit iterations do not
    # have: -x 0 then. hopbench takes --warmup.
    from hopsim import make_workload
    from hopsim.live import mpirun

    def args(tool, kind, **params):
        return mpirun.tool_arguments(tool, make_workload(kind, 2, sizes=[0, 16384], **params), None)

    assert args("osu", "pingpong", iterations=50, warmup=5)[-4:] == ["-i", "50", "-x", "5"]
    assert args("osu", "pingpong", iterations=50)[-4:] == ["-i", "50", "-x", "0"]
    assert "-i" not in args("osu", "pingpong") and "-x" not in args("osu", "pingpong")
    assert args("osu", "bandwidth", iterations=20, warmup=2)[-6:] == ["-W", "64", "-i", "20", "-x", "2"]
    assert args("hopbench", "pingpong", iterations=50, warmup=5)[-4:] == [
        "--iterations", "50", "--warmup", "5"]
    assert "--warmup" not in args("hopbench", "pingpong", iterations=50)


def test_a_hopsim_run_with_a_warmup_is_replayed_with_it(tmp_path):
    plat = Platform(name="b", nodes=2, cores=2, latency_us=10, bandwidth_gbps=1, bucket_gbps=0.1,
                    bucket_burst_bytes=100000)
    run = hopsim.simulate(plat, "pingpong", ranks=2, sizes=[16384], iterations=2, warmup=20)
    f = tmp_path / "run.json"
    f.write_text(run.to_json())
    (m,) = [m for m in parse_file(str(f)) if m.statistic == "latency_us"]
    assert dict(m.replay)["warmup"] == 20
    case = validate(plat, [str(f)]).cases[0]
    assert case.simulated_us == pytest.approx(run.results["rows"][0]["latency_us"], rel=1e-12)
    cold = hopsim.simulate(plat, "pingpong", ranks=2, sizes=[16384], iterations=2)
    assert case.simulated_us > 1.5 * cold.results["rows"][0]["latency_us"]
