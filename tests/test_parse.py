"""The parsers on real outputs made on this machine (tests/data/*/*.cmd say how), and on
truncated or corrupted copies of them made here."""
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

import hopsim
from hopsim.calibration.parsers import detect_format, parse_file, parse_text
from hopsim.errors import InputError

DATA = Path(__file__).parent / "data"
# Files only: tests/data/ray/ also holds folders of RayPlatform routing goldens (test_ray_files.py).
# tests/data/fuzz holds copies and broken variants for the fuzz tests (test_fuzz_contract.py).
REAL = sorted(p for p in DATA.glob("*/*") if p.is_file() and p.suffix != ".cmd"
              and p.parent.name != "fuzz")
FORMAT_OF_DIR = {"osu": "osu", "imb": "imb", "netpipe": "netpipe",
                 "latency_checker": "latency_checker", "ray": "ray"}


def rows(path):
    """The table rows of a text file: non-empty, non-comment lines starting with a digit."""
    return [l for l in path.read_text().splitlines() if l.strip()[:1].isdigit()]


def test_every_real_file_has_its_command():
    assert REAL, "no real outputs under tests/data"
    for p in REAL:
        if p.name == "README.md":
            continue
        cmd = Path(str(p) + ".cmd")
        assert cmd.is_file(), p
        assert "mpirun" in cmd.read_text()


@pytest.mark.parametrize("path", [p for p in REAL if p.name != "README.md"], ids=lambda p: p.name)
def test_real_file_is_detected_as_its_tool_and_parses(path):
    text = path.read_text()
    assert detect_format(text) == FORMAT_OF_DIR[path.parent.name]
    ms = parse_file(path)
    assert ms
    for m in ms:
        assert m.source == str(path)
        assert 1 <= m.line <= len(text.splitlines())
        assert math.isfinite(m.value) and m.value >= 0
        whole_us = m.statistic.startswith(("lc_", "ray_"))  # the tools print 0 legitimately
        if m.statistic.endswith("_us") and "deviation" not in m.statistic and not whole_us:
            assert m.value > 0  # a time: Measurement refuses 0 and below


@pytest.mark.parametrize("name, version, stat", [
    ("osu_latency-5.3.2-tcp.txt", "5.3.2", "latency_us"),
    ("osu_latency-7.4-tcp.txt", "7.4", "latency_us"),
    ("osu_bw-5.3.2-tcp.txt", "5.3.2", "bandwidth_mbytes_per_sec"),
    ("osu_bw-7.4-tcp.txt", "7.4", "bandwidth_mbytes_per_sec")])
def test_osu_headers_of_both_versions(name, version, stat):
    path = DATA / "osu" / name
    ms = parse_file(path)
    table = rows(path)
    assert len(ms) == len(table)
    assert {m.version for m in ms} == {version}
    assert {m.statistic for m in ms} == {stat}
    for m, line in zip(ms, table):
        size, value = line.split()
        assert (m.size, m.value, m.ranks) == (int(size), float(value), 2)
        assert path.read_text().splitlines()[m.line - 1] == line


def test_imb_blocks_processes_and_layouts():
    path = DATA / "imb" / "IMB-MPI1-p2p-np4-tcp.txt"
    ms = parse_file(path)
    blocks = {(m.workload, m.ranks) for m in ms}
    # -npmin 2 on 4 ranks: the two-rank benchmarks once, the others at 2 and 4 ranks.
    assert blocks == {("pingpong", 2), ("pingping", 2), ("sendrecv", 2), ("sendrecv", 4),
                      ("exchange", 2), ("exchange", 4)}
    exchange4 = [m for m in ms if m.workload == "exchange" and m.ranks == 4]
    assert {m.statistic for m in exchange4} == {"t_min_us", "t_max_us", "t_avg_us", "mbytes_per_sec"}
    sizes = sorted({m.size for m in exchange4})
    assert sizes == [0] + [2**k for k in range(17)]
    for m in exchange4:
        assert m.repetitions > 0
    # Each value is on the line it says, in its column.
    lines = path.read_text().splitlines()
    m = next(m for m in exchange4 if m.size == 65536 and m.statistic == "t_avg_us")
    assert float(lines[m.line - 1].split()[4]) == m.value
    pp = [m for m in ms if m.workload == "pingpong"]
    assert {m.statistic for m in pp} == {"t_us", "mbytes_per_sec"}


def test_imb_time_out_row_ends_the_block_without_a_measurement():
    # IMB-MPI1 -time 1 on a 100 Mbit/s emulated link: it gave up at 32768 B (PingPong)
    # and 131072 B (Exchange), printing 'time-out.' where the row would be.
    pp = parse_file(DATA / "imb" / "IMB-MPI1-pingpong-timeout-np2-100mbit.txt")
    assert sorted({m.size for m in pp}) == [0] + [2**k for k in range(15)]
    ex = parse_file(DATA / "imb" / "IMB-MPI1-exchange-timeout-np2-100mbit.txt")
    assert max(m.size for m in ex) == 65536 and {m.ranks for m in ex} == {2}
    m = next(m for m in pp if m.size == 16384 and m.statistic == "t_us")
    line = (DATA / "imb" / "IMB-MPI1-pingpong-timeout-np2-100mbit.txt").read_text().splitlines()[m.line - 1]
    assert line.split()[:3] == ["16384", "388", str(m.value)]
    # Anything else in a row's place is still an error, with its line.
    text = (DATA / "imb" / "IMB-MPI1-pingpong-timeout-np2-100mbit.txt").read_text()
    with pytest.raises(InputError, match="4 columns"):
        parse_text(text.replace("time-out.;", "timed out;"), "x.txt")


def test_imb_collective_layout():
    ms = parse_file(DATA / "imb" / "IMB-MPI1-allreduce-np4-shm.txt")
    assert {m.workload for m in ms} == {"allreduce"}
    assert {m.ranks for m in ms} == {2, 4}
    assert {m.statistic for m in ms} == {"t_min_us", "t_max_us", "t_avg_us"}
    for ranks in (2, 4):
        by = {(m.size, m.statistic): m.value for m in ms if m.ranks == ranks}
        for size in {s for s, _ in by}:
            assert by[(size, "t_min_us")] <= by[(size, "t_avg_us")] <= by[(size, "t_max_us")]


def test_netpipe_37_and_5():
    m37 = parse_file(DATA / "netpipe" / "np37-tcp.out")
    lat = [m for m in m37 if m.statistic == "latency_us"]
    assert len(lat) == len(rows(DATA / "netpipe" / "np37-tcp.out"))
    first = (DATA / "netpipe" / "np37-tcp.out").read_text().split()
    # bytes, Mbps (2^20 bits per second), one-way seconds
    assert lat[0].size == int(first[0]) and lat[0].value == pytest.approx(float(first[2]) * 1e6)
    bw = next(m for m in m37 if m.statistic == "bandwidth_mbps_binary")
    assert bw.value == pytest.approx(8 * bw.size / (lat[0].value * 1e-6) / 2**20, rel=1e-3)
    m5 = parse_file(DATA / "netpipe" / "np5-tcp.out")
    assert {m.version for m in m5} == {"5"}
    lat5 = [m for m in m5 if m.statistic == "latency_us"]
    assert len(lat5) == len(rows(DATA / "netpipe" / "np5-tcp.out"))
    # The file's first and last rows, copied by hand: "1 0.000 0.000 0.000 613.49" and
    # "1048576 0.991 0.549 2.468 8466.67" (bytes, avg/min/max Gbit/s, avg usec one way).
    assert (lat5[0].size, lat5[0].value) == (1, 613.49)
    assert (lat5[-1].size, lat5[-1].value) == (1048576, 8466.67)
    # One way, not the round trip: NetPIPE's own avg_Gbps is 8 s / t at that row,
    # 8 * 1048576 / 8466.67e-6 s = 0.9908 Gbit/s (printed 0.991).
    gbps = {m.size: m.value for m in m5 if m.statistic == "bandwidth_gbps"}
    assert gbps[1048576] == 0.991
    assert 8 * 1048576 / (lat5[-1].value * 1e-6) / 1e9 == pytest.approx(0.991, abs=5e-4)


def test_latency_checker_lines_in_any_order():
    ms = parse_file(DATA / "latency_checker" / "lc-np4-tcp.txt")
    final = [m for m in ms if m.statistic == "lc_average_of_averages_us"]
    assert len(final) == 1 and final[0].ranks == 4
    means = [m.value for m in ms if m.statistic == "lc_mean_us"]
    assert sorted(m.rank for m in ms if m.statistic == "lc_mean_us") == [0, 1, 2, 3]
    # Rank 0 prints the mean of the per-rank averages (process.c get_result_reply).
    assert final[0].value == pytest.approx(sum(means) / 4, abs=1e-5)
    assert final[0].size == final[0].reply_size == 4000 and final[0].repetitions == 2000


RAY_FILE = """# average and mode round trip latency in microseconds (10^-6 seconds) when requesting a reply for a message of 4000 bytes
# MessagePassingInterfaceRank\tName\tModeLatencyInMicroseconds\tAverageLatencyInMicroseconds\tNumberOfExchanges
# AverageForAllRanks: 21.5
# StandardDeviation: 1.5
0\tnode-0\t18\t20\t1000
1\tnode-0\tLATENCY_INFORMATION_NOT_AVAILABLELATENCY_INFORMATION_NOT_AVAILABLE\t1000
2\tnode-1\t19\t23\t1000
"""


def test_ray_network_test_file():
    # Ray itself is not built here (see docs/calibration.md); hopsim writes the same
    # file (hopsim.formats.ray_network_test) and the parser reads both.
    ms = parse_text(RAY_FILE, "NetworkTest.txt")
    avg = next(m for m in ms if m.statistic == "ray_average_for_all_ranks_us")
    assert (avg.value, avg.ranks, avg.size, avg.reply_size, avg.line) == (21.5, 3, 4000, 0, 3)
    assert sorted(m.rank for m in ms if m.statistic == "ray_mean_us") == [0, 2]


def test_ray_file_written_by_hopsim_parses_back():
    from hopsim.formats import ray_network_test
    r = hopsim.simulate("qlogic-ib", "roundtrip", ranks=16, ranks_per_node=8, exchanges=20,
                        reply_bytes=0, overlay="debruijn")
    ms = parse_text(ray_network_test(r), "NetworkTest.txt")
    avg = next(m for m in ms if m.statistic == "ray_average_for_all_ranks_us")
    assert avg.value == pytest.approx(r.results["ray_average_for_all_ranks_us"], rel=1e-5)
    assert avg.ranks == 16


@pytest.mark.parametrize("workload, params", [
    ("pingpong", dict(sizes=[0, 1024], iterations=5)),
    ("exchange", dict(ranks=4, sizes=[0, 4096], repetitions=5))])
def test_hopsim_json(workload, params):
    params = dict(params)
    ranks = params.pop("ranks", 2)
    r = hopsim.simulate("two-nodes" if ranks == 2 else "ec2-10gbe", workload, ranks=ranks, **params)
    ms = parse_text(r.to_json(), "sim.json")
    assert detect_format(r.to_json()) == "hopsim-json"
    stat = "latency_us" if workload == "pingpong" else "t_avg_us"
    got = {m.size: m.value for m in ms if m.statistic == stat}
    assert got == {row["bytes"]: row[stat] for row in r.results["rows"]}


# --- malformed and truncated files: one line, the file, the line, what was expected ---

def _cut(path: Path, keep_lines: int, tail: str = "") -> str:
    lines = path.read_text().splitlines()
    return "\n".join(lines[:keep_lines]) + ("\n" + tail if tail else "\n")


def corruptions():
    osu = DATA / "osu" / "osu_latency-7.4-tcp.txt"
    imb = DATA / "imb" / "IMB-MPI1-p2p-np4-tcp.txt"
    lc = DATA / "latency_checker" / "lc-np2-tcp.txt"
    np37 = DATA / "netpipe" / "np37-tcp.out"
    imb_lines = imb.read_text().splitlines()
    header_at = next(i for i, l in enumerate(imb_lines) if "#bytes" in l)
    lc_lines = lc.read_text().splitlines()
    return [
        ("osu-cut-mid-row", _cut(osu, 10) .rstrip("\n")[:-3] + "x\n", "a number"),
        ("osu-no-header", "# OSU MPI Latency Test v7.4\n0  1.5\n", "column header"),
        ("imb-cut-after-title", "\n".join(imb_lines[:header_at - 3]) + "\n", "rows of the PingPong block"),
        ("imb-bad-number", "\n".join(imb_lines[:header_at + 3] + [imb_lines[header_at + 3].replace(".", ",", 1)]) + "\n", "a number"),
        ("imb-short-row", "\n".join(imb_lines[:header_at + 2] + ["           16          200"]) + "\n", "4 columns"),
        ("lc-truncated", "\n".join(lc_lines[:-1]) + "\n", "final"),
        ("netpipe-cut", _cut(np37, 20).rstrip("\n").rsplit(" ", 1)[0] + "\n", "NetPIPE 3.7"),
        ("json-cut", json.dumps({"workload": "pingpong", "ranks": 2})[:-5], "hopsim JSON"),
        ("unknown", "hello\nworld\n", "recognised none"),
    ]


@pytest.mark.parametrize("name, text, expected", corruptions(), ids=lambda x: x if isinstance(x, str) and len(x) < 30 else "")
def test_malformed_file_is_one_line_with_file_and_line(tmp_path, name, text, expected):
    path = tmp_path / f"{name}.txt"
    path.write_text(text)
    with pytest.raises(InputError) as e:
        parse_file(path)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path}:")
    assert int(msg.split(":")[1]) >= 1
    assert expected in msg


def test_cli_exit_2_one_line_no_traceback(tmp_path):
    bad = tmp_path / "cut.txt"
    lines = (DATA / "latency_checker" / "lc-np4-tcp.txt").read_text().splitlines()
    bad.write_text("\n".join(lines[:-2]) + "\n")
    out = tmp_path / "p.toml"
    p = subprocess.run([sys.executable, "-m", "hopsim", "calibrate", str(bad), "--out", str(out)],
                       capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    assert f"{bad}:" in p.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == [bad]


@pytest.mark.parametrize("field, value", [("ranks", True), ("ranks", 2.5), ("ranks", 0),
                                          ("ranks_per_node", 0), ("repetitions", 0),
                                          ("size", -1), ("rank", 2), ("ranks", 2**31)])
def test_a_measurement_refuses_impossible_counts(field, value):
    from hopsim.calibration.measurement import Measurement
    kw = dict(tool="osu_latency", workload="pingpong", ranks=2, size=0, statistic="latency_us",
              value=5.0, source="f.txt", line=3)
    Measurement(**kw)  # the base case is fine
    with pytest.raises(InputError, match=f"^f.txt:3: {field}: "):
        Measurement(**dict(kw, **{field: value}))


@pytest.mark.parametrize("statistic, value, ok", [
    ("latency_us", 0.0, False), ("latency_us", -1.0, False), ("latency_us", 1e-3, True),
    ("ray_standard_deviation_us", 0.0, True), ("ray_standard_deviation_us", -0.5, False),
    ("bandwidth_gbps", 0.0, True), ("bandwidth_gbps", -0.1, False),
    ("latency_us", float("nan"), False), ("t_avg_us", float("inf"), False)])
def test_a_measurement_is_a_positive_time_or_a_nonnegative_value(statistic, value, ok):
    from hopsim.calibration.measurement import Measurement
    make = lambda: Measurement("x", "pingpong", 2, 0, statistic, value, "f.txt", 3)
    if ok:
        assert make().value == value
    else:
        with pytest.raises(InputError, match=f"^f.txt:3: {statistic}: "):
            make()


def test_latency_checker_mode_of_zero_is_the_tools_own_value():
    # A real 8-rank run (tests/data/latency_checker/lc-np8-mode0-rigB.txt.cmd): rank 6's
    # most frequent round trip went to itself and took under a microsecond.
    ms = parse_file(DATA / "latency_checker" / "lc-np8-mode0-rigB.txt")
    modes = {m.rank: m.value for m in ms if m.statistic == "lc_mode_us"}
    assert modes[6] == 0 and modes[7] == 4 and len(modes) == 8
    (avg,) = [m.value for m in ms if m.statistic == "lc_average_of_averages_us"]
    assert avg == 202.474601


def test_latency_checker_under_8_bytes_averages_the_ranks_lines():
    # A real 8-rank run at -message-size 0 (lc-np8-size0-rigI.txt.cmd): the tool's last
    # line says 0.000000 (each rank's average travels in a 0-byte message), its ranks'
    # lines 75-84 us; their mean is the statistic.
    ms = parse_file(DATA / "latency_checker" / "lc-np8-size0-rigI.txt")
    means = [m.value for m in ms if m.statistic == "lc_mean_us"]
    assert len(means) == 8 and min(means) > 75
    (avg,) = [m for m in ms if m.statistic == "lc_average_of_averages_us"]
    assert avg.value == pytest.approx(80.378195, abs=1e-6) and avg.size == 0
    assert "average of average roundtrip latencies: 0.000000" in (
        DATA / "latency_checker" / "lc-np8-size0-rigI.txt").read_text().splitlines()[avg.line - 1]


def test_latency_checker_from_8_bytes_keeps_the_tools_last_line(tmp_path):
    # At 8 bytes and more the double arrives whole: the tool's own line is the value,
    # even where it differs from the ranks' mean (here made to differ).
    text = (DATA / "latency_checker" / "lc-np8-size0-rigI.txt").read_text()
    for size in (7, 8):
        f = tmp_path / f"lc{size}.txt"
        f.write_text(text.replace("message size: 0 bytes (-message-size 0)",
                                  f"message size: {size} bytes (-message-size {size})")
                     .replace("latencies: 0.000000", "latencies: 12.500000"))
        (avg,) = [m.value for m in parse_file(f) if m.statistic == "lc_average_of_averages_us"]
        assert avg == (12.5 if size == 8 else pytest.approx(80.378195, abs=1e-6))


@pytest.mark.parametrize("size", [0, 4000])
def test_latency_checker_without_rank_lines_is_refused(tmp_path, size):
    f = tmp_path / "lc.txt"
    f.write_text(f"Rank 0 -> message size: {size} bytes (-message-size {size}) exchanges: 300 "
                 "(-exchanges 300)\n\nRank 0 -> average of average roundtrip latencies: "
                 "0.000000 microseconds\n")
    with pytest.raises(InputError, match=r"lc\.txt:3: expected a result line per rank"):
        parse_file(f)


def test_latency_checker_negative_mode_is_refused(tmp_path):
    text = (DATA / "latency_checker" / "lc-np8-mode0-rigB.txt").read_text()
    bad = tmp_path / "lc.txt"
    bad.write_text(text.replace("mode roundtrip latency: 0 microseconds",
                                "mode roundtrip latency: -1 microseconds"))
    with pytest.raises(InputError, match=r"lc\.txt:7: lc_mode_us: a time >= 0 us, got -1"):
        parse_file(bad)
