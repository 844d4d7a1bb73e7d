"""FILE@K[,block|cyclic]: one file's placement on calibrate's and validate's command line,
beside files run another way (calibration/file_placement.py)."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hopsim
from hopsim.calibration.file_placement import read, split_arg
from hopsim.calibration.validate import MAX_ITERATIONS
from hopsim.errors import InputError

DATA = Path(__file__).parent / "data"
# IMB-MPI1 PingPong, PingPing, Sendrecv and Exchange on 4 ranks (2 in its first tables).
IMB4 = DATA / "imb" / "IMB-MPI1-p2p-np4-tcp.txt"
# IMB-MPI1 Exchange on 2 ranks.
IMB2 = DATA / "imb" / "IMB-MPI1-exchange-np2-tcp.txt"

# Two 4-core nodes, 10 us and 1 Gbit/s between them, 0.5 us and 50 Gbit/s inside one.
PLATFORM = """name = "placed"
[nodes]
count = 2
cores = 4
[network]
latency_us = 10.0
bandwidth_gbps = 1.0
nic_message_us = 5.0
[intranode]
latency_us = 0.5
bandwidth_gbps = 50.0
"""


@pytest.fixture
def platform(tmp_path):
    path = tmp_path / "placed.toml"
    path.write_text(PLATFORM)
    return str(path)


def cli(*args):
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], capture_output=True,
                          text=True, timeout=300)


def exchange_t_avg(platform, placement, ranks_per_node=2, ranks=4):
    reps = min(200, MAX_ITERATIONS)
    rows = hopsim.simulate(platform, "exchange", ranks=ranks, ranks_per_node=ranks_per_node,
                           sizes=[65536], repetitions=reps, placement=placement).results["rows"]
    return rows[0]["t_avg_us"]


def by_case(report, path):
    return {(c.workload, c.ranks, c.bytes): c for c in report.cases if c.file == str(path)}


def test_split_reads_ranks_per_node_and_placement():
    assert split_arg("runs/x.txt@2,cyclic") == ("runs/x.txt", 2, "cyclic")
    assert split_arg("runs/x.txt@3") == ("runs/x.txt", 3, "block")
    assert split_arg("runs/x.txt@2,block") == ("runs/x.txt", 2, "block")
    assert split_arg("runs/x.txt") == ("runs/x.txt", None, None)
    # The last @ starts the suffix: a folder with an @ in its name still works.
    assert split_arg("me@host/x.txt@4") == ("me@host/x.txt", 4, "block")


def test_a_path_that_exists_with_its_at_sign_is_a_path(tmp_path):
    f = tmp_path / "exchange@2"
    shutil.copy(IMB2, f)
    assert split_arg(str(f)) == (str(f), None, None)


@pytest.mark.parametrize("arg, message", [
    ("x.txt@two", "expected FILE@K or FILE@K,block|cyclic with K ranks per node, got 'two'"),
    ("x.txt@0", "ranks per node"),
    ("x.txt@2,diagonal", "the placement after K must be block or cyclic, got 'diagonal'"),
    ("o.txt@iterations=50", "give iterations=N and warmup=M together"),
    ("o.txt@warmup=5", "give iterations=N and warmup=M together"),
    ("o.txt@iters=5", "expected K[,block|cyclic] then iterations=N,warmup=M"),
    ("o.txt@iterations=5,warmup=1,warmup=2", "got 'warmup=2'"),
    ("o.txt@iterations=x,warmup=1", "iterations must be a whole number, got 'x'"),
    ("o.txt@iterations=0,warmup=1", "iterations must be at least 1"),
    ("o.txt@iterations=5,warmup=-1", "warmup: must be at least 0"),
])
def test_a_bad_suffix_is_one_line_naming_it(arg, message):
    pattern = message.replace("|", r"\|").replace("(", r"\(").replace("[", r"\[")
    with pytest.raises(InputError, match=pattern):
        split_arg(arg)


def test_the_suffix_places_that_file_only(platform):
    # IMB's file says nothing of its placement: @2,cyclic puts its 4-rank Exchange 2 per
    # node round-robin, while the 2-rank file beside it stays 1 per node.
    report = hopsim.calibration.validate.validate(platform, [IMB2, f"{IMB4}@2,cyclic"])
    four = by_case(report, IMB4)[("exchange", 4, 65536)]
    two = by_case(report, IMB2)[("exchange", 2, 65536)]
    assert four.ranks_per_node == 2 and four.run["placement"] == "cyclic"
    assert two.ranks_per_node == 1 and "placement" not in two.run
    cyclic, block = exchange_t_avg(platform, "cyclic"), exchange_t_avg(platform, "block")
    assert cyclic > block  # every neighbour of a cyclic ring is across the network
    assert four.simulated_us == pytest.approx(cyclic, abs=1e-9)
    blocked = hopsim.calibration.validate.validate(platform, [f"{IMB4}@2"])
    assert by_case(blocked, IMB4)[("exchange", 4, 65536)].simulated_us == pytest.approx(block, abs=1e-9)


def test_the_flags_cover_the_other_files_and_not_a_suffixed_one(platform):
    # --ranks-per-node 2 --placement cyclic for the unsuffixed file; @1 keeps its own.
    ms, rpn = read([IMB4, f"{IMB2}@1"], ranks_per_node=2, placement="cyclic")
    assert rpn is None
    assert {m.ranks_per_node for m in ms if m.source == str(IMB4)} == {2}
    assert {dict(m.replay)["placement"] for m in ms if m.source == str(IMB4)} == {"cyclic"}
    assert {m.ranks_per_node for m in ms if m.source == str(IMB2)} == {1}
    assert {dict(m.replay)["placement"] for m in ms if m.source == str(IMB2)} == {"block"}


def test_without_a_suffix_nothing_changes(platform):
    ms, rpn = read([IMB4], ranks_per_node=2, placement=None)
    assert rpn == 2 and all(m.ranks_per_node is None and m.replay == () for m in ms)


def test_a_suffix_against_the_files_own_record_is_an_error(platform, tmp_path):
    run = hopsim.simulate(platform, "exchange", ranks=4, ranks_per_node=2, sizes=[0],
                          repetitions=1)
    own = tmp_path / "own.json"
    own.write_text(run.to_json())
    with pytest.raises(InputError, match=r"own.json@1: the file records 2 rank\(s\) per node"):
        read([f"{own}@1"])
    ms, _ = read([f"{own}@2,cyclic"])  # the same count: the suffix's placement goes
    assert {dict(m.replay)["placement"] for m in ms} == {"cyclic"}


def test_calibrate_and_validate_take_the_suffix_on_the_command_line(platform, tmp_path):
    p = cli("validate", "--platform", platform, f"{IMB4}@2,cyclic", "--json")
    assert p.returncode == 0, p.stderr
    cases = [c for c in json.loads(p.stdout)["cases"]
             if c["workload"] == "exchange" and c["ranks"] == 4 and c["bytes"] == 65536]
    assert cases[0]["ranks_per_node"] == 2
    assert cases[0]["simulated_us"] == pytest.approx(exchange_t_avg(platform, "cyclic"), abs=1e-9)
    bad = cli("validate", "--platform", platform, f"{IMB4}@2,diagonal")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "must be block or cyclic" in bad.stderr
    out = tmp_path / "fit.toml"
    bad = cli("calibrate", f"{IMB2}@x", "--base", "two-nodes", "--closed-form", "--out", out)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "@x" in bad.stderr
    assert not out.exists()


def test_a_held_out_file_keeps_its_suffix(platform):
    # --holdout FILE@2,cyclic: the prediction replays the file as placed.
    from hopsim import platforms
    from hopsim.calibration.holdout import predict

    table = predict(platforms.load(platform), [f"{IMB4}@2,cyclic"])
    (pred,) = table.predictions
    case = next(c for c in pred.cases if (c.workload, c.ranks, c.bytes) == ("exchange", 4, 65536))
    assert case.ranks_per_node == 2
    assert case.simulated_us == pytest.approx(exchange_t_avg(platform, "cyclic"), abs=1e-9)


# osu_latency 7.4 run with -i 1000 -x 100 (its .cmd), which its output does not print.
OSU = DATA / "osu" / "osu_latency-7.4-tcp.txt"
# osu_bw 7.4 with -i 20 -x 5.
OSU_BW = DATA / "osu" / "osu_bw-7.4-tcp.txt"
# A 4 MB bucket refilled at 12.5 bytes/us: a round trip of s bytes (s / 125 + 10 us each
# way) takes 0.8 s - 250 tokens from each node's. The sizes 512..8192 B take 11447 per
# round trip of each: 200 round trips per size (2.3 MB) leave 8 KiB on a full bucket,
# the run's 1100 (12.6 MB) drain it.
BUCKET = PLATFORM.replace("nic_message_us = 5.0\n",
                          "bucket_gbps = 0.1\nbucket_burst_bytes = 4000000\n")


def test_parse_reads_osu_loop_counts_alone_or_after_the_placement():
    from hopsim.calibration.file_placement import FileArg, parse_arg

    assert parse_arg("o.txt@iterations=50,warmup=5") == FileArg("o.txt", None, None, 50, 5)
    assert parse_arg("o.txt@1,iterations=20,warmup=0") == FileArg("o.txt", 1, "block", 20, 0)
    assert parse_arg("o.txt@2,cyclic,warmup=2,iterations=3") == FileArg("o.txt", 2, "cyclic", 3, 2)
    assert split_arg("o.txt@1,iterations=20,warmup=0") == ("o.txt", 1, "block")


def test_counts_are_for_osu_files_only(platform):
    with pytest.raises(InputError, match="iterations= and warmup= are osu_latency's and "
                                         "osu_bw's -i and -x; this imb file records its own"):
        read([f"{IMB2}@iterations=5,warmup=1"])


def test_the_counts_replay_the_run_as_it_ran(tmp_path):
    # On a token bucket the 1000 + 100 round trips of the run drain what 200 (validate's
    # cap when the file says nothing) do not: the replay must run the run's own counts.
    bucket = tmp_path / "bucket.toml"
    bucket.write_text(BUCKET)
    told = by_case(hopsim.calibration.validate.validate(
        str(bucket), [f"{OSU}@iterations=1000,warmup=100"]), OSU)
    untold = by_case(hopsim.calibration.validate.validate(str(bucket), [OSU]), OSU)
    case = told[("pingpong", 2, 8192)]
    assert case.run["iterations"] == 1000 and case.run["warmup"] == 100
    assert untold[("pingpong", 2, 8192)].run["iterations"] == MAX_ITERATIONS
    assert "warmup" not in untold[("pingpong", 2, 8192)].run
    sizes = [s for (_, _, s) in told]
    own = hopsim.simulate(str(bucket), "pingpong", ranks=2, sizes=sizes, iterations=1000,
                          warmup=100).results["rows"]
    assert case.simulated_us == pytest.approx(
        next(r["latency_us"] for r in own if r["bytes"] == 8192), rel=1e-12)
    # The drained bucket: the told replay's 8 KiB round trips are slower.
    assert untold[("pingpong", 2, 8192)].simulated_us == pytest.approx(10 + 8192 / 125, rel=1e-6)
    assert case.simulated_us > 3 * untold[("pingpong", 2, 8192)].simulated_us


def test_osu_bw_takes_its_counts_too(tmp_path):
    bucket = tmp_path / "bucket.toml"
    bucket.write_text(BUCKET)
    told = by_case(hopsim.calibration.validate.validate(
        str(bucket), [f"{OSU_BW}@iterations=20,warmup=5"]), OSU_BW)
    case = told[("bandwidth", 2, 65536)]
    assert case.run["iterations"] == 20 and case.run["warmup"] == 5
