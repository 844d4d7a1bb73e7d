"""IMB's collectives as Open MPI's algorithms run them (simulator/collectives/).

Closed forms on an uncontended star, derived by hand below: latency L = 10 us and
8 Gbit/s, so s bytes cross in L + s/1000 us; no host costs unless a test sets the
reduction's ns per byte (c). One rank per node, so every message crosses the switch.
Times are IMB's: per rank, from the call to its return (an eager send completes when
posted), one repetition unless said otherwise.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import hopsim
from hopsim import _engine
from hopsim.errors import InputError
from hopsim.platforms import Platform

L = 10.0
C = _engine.collectives


def star(**changes) -> Platform:
    return Platform(name="star", nodes=64, cores=16, latency_us=L, bandwidth_gbps=8.0, **changes)


def row(kind, ranks, size, algorithm, transport="flow", reps=1, c=0.0, **params):
    params = dict(params, repetitions=reps, algorithm=algorithm, transport=transport)
    if kind != "barrier":
        params["sizes"] = [size]
    r = hopsim.simulate(star(reduce_ns_per_byte=c), kind, ranks=ranks, **params)
    (out,) = r.results["rows"]
    assert out["algorithm"] == algorithm and r.results["decision"] == "forced"
    return out


def times(out):
    return out["t_min_us"], out["t_max_us"], out["t_avg_us"]


BOTH = ("flow", "queue")


# ---- closed forms ------------------------------------------------------------------

@pytest.mark.parametrize("transport", BOTH)
def test_alltoall_pairwise_is_n_minus_1_sendrecvs(transport):
    # 8 ranks, 1000 B: 7 steps, each a sendrecv with a different partner, each rank
    # sending one and receiving one message per step: 7 x (10 + 1).
    assert times(row("alltoall", 8, 1000, "pairwise", transport)) == pytest.approx((77, 77, 77))


@pytest.mark.parametrize("transport", BOTH)
def test_alltoall_bruck_is_log_n_steps_of_half_the_blocks(transport):
    # 8 ranks: distances 1, 2, 4; each step moves the 4 of blocks 1..7 whose index has
    # that bit set: 3 x (10 + 4 x 1000 / 1000).
    assert times(row("alltoall", 8, 1000, "modified_bruck", transport)) == pytest.approx((42, 42, 42))


@pytest.mark.parametrize("transport", BOTH)
def test_alltoall_linear_shares_each_nic_between_n_minus_1_messages(transport):
    # All 7 sends leave at once through one NIC, 7 receives share the other way:
    # the last byte is in after 10 + 7 x 1000 B / (1000 B/us).
    assert times(row("alltoall", 8, 1000, "linear", transport)) == pytest.approx((17, 17, 17))


@pytest.mark.parametrize("transport", BOTH)
def test_allgather_closed_forms(transport):
    # ring, 6 ranks: 5 x (10 + 1).
    assert times(row("allgather", 6, 1000, "ring", transport)) == pytest.approx((55, 55, 55))
    # recursive doubling, 8 ranks: 3 steps of 1, 2, 4 blocks: 30 + 7.
    assert times(row("allgather", 8, 1000, "recursive_doubling", transport)) == pytest.approx((37, 37, 37))
    # bruck, 6 ranks: distances 1, 2, 4 carry 1, 2 and min(4, 6 - 4) = 2 blocks: 30 + 5.
    assert times(row("allgather", 6, 1000, "bruck", transport)) == pytest.approx((35, 35, 35))
    # neighbor exchange, 8 ranks: one block, then 3 steps of two: 11 + 3 x 12.
    assert times(row("allgather", 8, 1000, "neighbor", transport)) == pytest.approx((47, 47, 47))


@pytest.mark.parametrize("transport", BOTH)
def test_allreduce_recursive_doubling_power_of_two(transport):
    # 8 ranks, 4000 B, c = 0.5 ns/B: 3 steps of (10 + 4 + 4000 x 0.5 / 1000) = 3 x 16.
    assert times(row("allreduce", 8, 4000, "recursive_doubling", transport, c=0.5)) == \
        pytest.approx((48, 48, 48))


def test_allreduce_recursive_doubling_folds_the_extra_ranks():
    # 6 ranks, 4000 B, flow transport. 0 -> 1 and 2 -> 3 fold while 4 <-> 5 exchange
    # (distance 1 of newranks 2, 3): all in at 14. Then 1 <-> 3 (distance 1) while 4 -> 1
    # and 5 -> 3 (distance 2) start too: two transfers into node 1 (and into node 3)
    # share its link, 10 + 8000 / 1000 = 18 us: in at 32. Rank 1 already holds 4's
    # vector, so it sends its distance-2 message to 4 and the result to 0 together: two
    # transfers out of node 1 share its link, in at 32 + 18 = 50 (likewise 3 -> 5, 3 -> 2).
    # Ranks 1 and 3 return at 32, the others at 50.
    out = row("allreduce", 6, 4000, "recursive_doubling")
    assert times(out) == pytest.approx((32, 50, (2 * 32 + 4 * 50) / 6))


@pytest.mark.parametrize("transport", BOTH)
def test_allreduce_ring(transport):
    # 4 ranks, 4000 B = 1000 floats = 4 blocks of 1000 B. Reduce-scatter: 3 steps of
    # (10 + 1 + 1000 x 0.5 / 1000); allgather: 3 steps of (10 + 1).
    assert times(row("allreduce", 4, 4000, "ring", transport, c=0.5)) == \
        pytest.approx((67.5, 67.5, 67.5))


@pytest.mark.parametrize("transport", BOTH)
def test_allreduce_rabenseifner(transport):
    # 8 ranks, 8000 B: the reduce-scatter halves receive 4000, 2000, 1000 B, each also
    # combined at 0.5 ns/B: (10 + 4 + 2) + (10 + 2 + 1) + (10 + 1 + 0.5); the allgather
    # sends them back doubling: (10 + 1) + (10 + 2) + (10 + 4).
    assert times(row("allreduce", 8, 8000, "rabenseifner", transport, c=0.5)) == \
        pytest.approx((77.5, 77.5, 77.5))


def test_reduction_cost_is_per_byte_combined():
    # The ring's only reduction-dependent part: 3 steps x 1000 B combined x c.
    free = row("allreduce", 4, 4000, "ring")["t_max_us"]
    costly = row("allreduce", 4, 4000, "ring", c=2.0)["t_max_us"]
    assert costly - free == pytest.approx(3 * 1000 * 2.0 / 1000)


def test_bcast_linear_and_chain():
    # linear, 4 ranks, 1000 B: the root's eager sends complete when posted (0); its
    # NIC carries all three at once, in at 10 + 3.
    assert times(row("bcast", 4, 1000, "basic_linear")) == pytest.approx((0, 13, 39 / 4))
    # chain: rank k has it at k x 11 and returns after forwarding it.
    for transport in BOTH:
        assert times(row("bcast", 4, 1000, "chain", transport)) == pytest.approx((0, 33, 16.5))


@pytest.mark.parametrize("transport", BOTH)
def test_reduce_binomial(transport):
    # In-order binomial tree on 4 ranks: 1 -> 0, 3 -> 2 -> 0. 4000 B take 14 us, combining
    # them 2 us. 2 has 3's vector at 14, combined at 16, in at 0 at 30, combined at 32
    # (1's came at 14). Leaves return at once (eager). Ranks 0..3: 32, 0, 16, 0.
    assert times(row("reduce", 4, 4000, "binomial", transport, c=0.5)) == pytest.approx((0, 32, 12))


@pytest.mark.parametrize("transport", BOTH)
def test_barriers(transport):
    # linear, 4 ranks: everyone -> 0 (10), 0 -> everyone (20); 0 returns once it posted.
    assert times(row("barrier", 4, 0, "linear", transport)) == pytest.approx((10, 20, 17.5))
    # bruck (dissemination), 5 ranks: ceil(log2 5) = 3 steps of 10.
    assert times(row("barrier", 5, 0, "bruck", transport)) == pytest.approx((30, 30, 30))
    # tree, 4 ranks: up 1 -> 0, 3 -> 2 (10), 2 -> 0 (20); down 0 -> 2, 0 -> 1 (30),
    # 2 -> 3 (40). Ranks 0..3: 20, 30, 30, 40.
    assert times(row("barrier", 4, 0, "tree", transport)) == pytest.approx((20, 40, 30))
    # recursive doubling, 6 ranks: 4 and 5 send to 0 and 1 (in at 10) and wait for their
    # answer. Distance 1: 2 <-> 3 at once (10), 0 <-> 1 from 10 (20). Distance 2: 2 and 3
    # sent at 10, so 0 and 1 are through at 20 and answer 4 and 5 (in at 30); 2 and 3
    # get 0's and 1's messages at 30. Ranks 0..5: 20, 20, 30, 30, 30, 30.
    assert times(row("barrier", 6, 0, "recursive_doubling", transport)) == \
        pytest.approx((20, 30, 160 / 6))


def test_barrier_repetitions_run_back_to_back():
    # IMB times its barriers in one loop: 5 dissemination barriers of 2 x 10 us.
    out = row("barrier", 4, 0, "bruck", reps=5)
    assert out["repetitions"] == 5 and times(out) == pytest.approx((20, 20, 20))


def test_zero_bytes_is_no_message():
    # Open MPI's MPI layer returns before any algorithm for a count of 0.
    r = hopsim.simulate(star(), "alltoall", ranks=4, sizes=[0], repetitions=3)
    assert r.messages == 0 and times(r.results["rows"][0]) == (0, 0, 0)


# ---- IMB's sizes and repetitions ----------------------------------------------------

def test_imb_sizes():
    assert C.imb_sizes("alltoall") == [0] + [2**k for k in range(23)]
    assert C.imb_sizes("allreduce") == [0] + [2**k for k in range(2, 23)]
    assert C.imb_sizes("barrier") == [0]
    assert hopsim.workload.make_workload("reduce", 4).sizes == tuple(C.imb_sizes("reduce"))


def test_imb_repetitions_volume_and_time_rules():
    assert [C.imb_base_repetitions(s) for s in (0, 1, 41943, 41944, 4194304)] == [1000, 1000, 1000, 999, 10]
    # A slow star (1 B/us, L = 10 us), pairwise Alltoall on 4 ranks. 1 MiB: one
    # repetition takes 3 x (10 + 1048576) us = 3.14576 s, so IMB's time rule allows
    # floor(1 + 10 / 3.14576) = 4 < 40. 4 MiB: 12.58 s, floor(1 + 0.79) = 1.
    slow = Platform(name="slow", nodes=4, cores=1, latency_us=L, bandwidth_gbps=0.008)
    r = hopsim.simulate(slow, "alltoall", ranks=4, sizes=[1048576, 4194304], algorithm="pairwise")
    assert [x["repetitions"] for x in r.results["rows"]] == [4, 1]
    assert r.results["rows"][0]["t_max_us"] == pytest.approx(3 * (10 + 1048576))


# ---- schedules, message by message ------------------------------------------------------

def test_alltoall_schedules():
    b = 10
    # pairwise, 4 ranks: step k sends to rank + k + 1, tagged with the step.
    assert C.schedule("alltoall", "pairwise", 4, b)[0] == [
        ([(1, b, 0)], 1, False), ([(2, b, 1)], 1, False), ([(3, b, 2)], 1, False)]
    # linear: one step, sends to rank - 1, rank - 2, ... (coll_base_alltoall.c's order).
    assert C.schedule("alltoall", "linear", 4, b)[1] == [([(0, b, 0), (3, b, 0), (2, b, 0)], 3, False)]
    # Bruck, 5 ranks: distance 1 carries blocks 1, 3; distance 2 blocks 2, 3; 4 block 4.
    assert C.schedule("alltoall", "modified_bruck", 5, b)[0] == [
        ([(1, 2 * b, 0)], 1, False), ([(2, 2 * b, 1)], 1, False), ([(4, b, 2)], 1, False)]


def test_allreduce_schedules():
    s = C.schedule("allreduce", "recursive_doubling", 6, 40)
    # 0 folds into 1, then waits for the result; 1 combines, doubles with 3 and 4
    # (newranks 1 and 2), hands back to 0.
    assert s[0] == [([(1, 40, 0)], 0, False), ([], 0, False), ([], 0, False), ([], 1, False)]
    assert s[1] == [([], 1, True), ([(3, 40, 1)], 1, True), ([(4, 40, 2)], 1, True),
                    ([(0, 40, 3)], 0, False)]
    # ring, 3 ranks, 10 floats: blocks of 4, 3, 3 floats (16, 12, 12 B). Rank 0 sends
    # blocks 0, 2 while reducing, then 1, 0 in the allgather, always to rank 1.
    assert C.schedule("allreduce", "ring", 3, 40)[0] == [
        ([(1, 16, 0)], 1, True), ([(1, 12, 1)], 1, True), ([(1, 12, 2)], 1, False), ([(1, 16, 3)], 1, False)]
    # Rabenseifner, 4 ranks, 8 floats: halving with 1 (4 floats) then 2 (2 floats),
    # doubling back with 2 then 1; no folding steps at a power of two.
    assert C.schedule("allreduce", "rabenseifner", 4, 32)[0] == [
        ([], 0, False), ([], 0, False), ([(1, 16, 2)], 1, True), ([(2, 8, 3)], 1, True),
        ([(2, 8, 4)], 1, False), ([(1, 16, 5)], 1, False), ([], 0, False)]
    # Below 2^floor(log2 n) elements Open MPI runs the basic linear allreduce instead.
    assert C.schedule("allreduce", "rabenseifner", 4, 8)[1] == [([(0, 8, 0)], 0, False), ([], 1, False)]


def test_tree_schedules():
    b = 100
    s = C.schedule("bcast", "binomial", 8, b)
    assert s[0] == [([(1, b, 0), (2, b, 0), (4, b, 0)], 0, False)]
    assert s[1] == [([], 1, False), ([(3, b, 0), (5, b, 0)], 0, False)]
    assert s[6] == [([], 1, False)]
    assert s[2] == [([], 1, False), ([(6, b, 0)], 0, False)]
    k = C.schedule("bcast", "knomial", 8, b)  # radix 4
    assert k[0] == [([(4, b, 0), (1, b, 0), (2, b, 0), (3, b, 0)], 0, False)]
    assert k[4] == [([], 1, False), ([(5, b, 0), (6, b, 0), (7, b, 0)], 0, False)]
    # in-order binary reduce, 5 ranks: 4 <- {3, 1}, 3 <- 2, 1 <- 0, then 4 -> 0.
    r = C.schedule("reduce", "in-order_binary", 5, 8)
    assert r[4] == [([], 2, True), ([(0, 8, 1)], 0, False)]
    assert r[0] == [([(1, 8, 0)], 0, False), ([], 1, False)]
    assert r[2] == [([(3, 8, 0)], 0, False)]
    assert C.schedule("barrier", "linear", 3, 0)[0] == [([], 2, False), ([(1, 0, 1), (2, 0, 1)], 0, False)]


# ---- Open MPI 4.1's decision ----------------------------------------------------------
# ompi/mca/coll/tuned/coll_tuned_decision_fixed.c at tag v4.1.4, lines cited.

@pytest.mark.parametrize("kind, ranks, size, expected", [
    ("alltoall", 32, 100, "modified_bruck"),   # 311-313: < 64 ranks, < 512 B -> 3
    ("alltoall", 32, 1024, "linear"),          # 314-315: < 524288 B -> 1
    ("alltoall", 32, 1 << 20, "linear_sync"),  # 316-317: else -> 4
    ("alltoall", 4096, 1024, "modified_bruck"),  # 391-393: >= 4096 ranks, < 2048 B -> 3
    ("alltoall", 4096, 65536, "linear_sync"),    # 402-403: else -> 4
    ("allreduce", 8, 4096, "recursive_doubling"),  # 145-147: < 16 ranks, < 8192 B -> 3
    ("allreduce", 8, 8192, "rabenseifner"),        # 148-149: else -> 6
    ("allreduce", 65536, 1024, "nonoverlapping"),  # 203-205: < 2048 B -> 2
    ("allreduce", 65536, 8192, "segmented_ring"),  # 206-207: < 16384 B -> 5
    ("allreduce", 65536, 1 << 20, "rabenseifner"),  # 210-211: else -> 6
    ("barrier", 4, 0, "linear"),       # 484-485: < 8 ranks -> 1
    ("barrier", 300, 0, "tree"),       # 490-491: < 512 ranks -> 6
    ("bcast", 40, 4096, "knomial"),    # 597-601: < 64 ranks, >= 2048 B -> 7
    ("reduce", 12, 8192, "binomial"),  # 757-760: < 16 ranks, >= 8192 B -> 5
    ("allgather", 2, 100, "two_proc"),  # 1118-1119: 2 ranks -> 6
])
def test_decision_points(kind, ranks, size, expected):
    assert C.decision(kind, ranks, size) == expected


def test_the_decision_runs_when_no_algorithm_is_forced():
    r = hopsim.simulate(star(), "alltoall", ranks=32, sizes=[100, 1024], repetitions=1)
    assert [x["algorithm"] for x in r.results["rows"]] == ["modified_bruck", "linear"]
    assert r.results["decision"] == "openmpi-4.1"


# ---- inputs -------------------------------------------------------------------------

@pytest.mark.parametrize("kind, params, message", [
    ("alltoall", {"algorithm": "ring"}, "algorithm: alltoall has no algorithm 'ring'"),
    ("alltoall", {"algorithm": "two_proc"}, "two_proc runs on exactly 2 ranks"),
    ("allreduce", {"sizes": [6]}, "6 is not a multiple of 4"),
    ("barrier", {"sizes": [4]}, "sizes: does not apply to the barrier workload"),
])
def test_bad_inputs_are_named(kind, params, message):
    with pytest.raises(InputError, match=message):
        hopsim.simulate(star(), kind, ranks=4, **params)


def test_cli_prints_imb_blocks_and_refuses_bad_algorithms():
    cmd = [sys.executable, "-m", "hopsim", "simulate", "--platform", "two-nodes", "--workload",
           "allreduce", "--ranks", "2", "--sizes", "0,4,1024",
           "--repetitions", "2"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[1] == "# Benchmarking Allreduce" and lines[2] == "# #processes = 2"
    assert lines[4].split() == ["#bytes", "#repetitions", "t_min[usec]", "t_max[usec]", "t_avg[usec]"]
    assert [l.split()[0] for l in lines[5:]] == ["0", "4", "1024"] and len(lines[5]) == 5 * 13
    j = subprocess.run(cmd + ["--json"], capture_output=True, text=True)
    assert json.loads(j.stdout)["results"]["rows"][2]["bytes"] == 1024
    p = subprocess.run(cmd + ["--algorithm", "fastest"], capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1
    assert "has no algorithm 'fastest'" in p.stderr and "Traceback" not in p.stderr
    b = subprocess.run([sys.executable, "-m", "hopsim", "simulate", "--platform", "two-nodes",
                        "--workload", "barrier", "--ranks", "2", "--repetitions", "3"],
                       capture_output=True, text=True)
    assert b.returncode == 0 and b.stdout.splitlines()[4].split()[0] == "#repetitions"


def test_same_inputs_same_results():
    a = hopsim.simulate(star(), "alltoall", ranks=6, sizes=[64, 4096], repetitions=2)
    b = hopsim.simulate(star(), "alltoall", ranks=6, sizes=[64, 4096], repetitions=2)
    assert json.dumps(a.results) == json.dumps(b.results)


def test_validate_replays_a_collective_json(tmp_path):
    from hopsim.calibration.validate import validate

    r = hopsim.simulate(star(reduce_ns_per_byte=1.0), "allreduce", ranks=6, sizes=[64, 4096],
                        repetitions=2, algorithm="ring")
    f = tmp_path / "ar.json"
    f.write_text(r.to_json())
    report = validate(star(reduce_ns_per_byte=1.0), [str(f)])
    assert len(report.cases) == 2
    assert all(c.run.get("algorithm") == "ring" for c in report.cases)
    assert all(c.simulated_us == pytest.approx(c.measured_us) for c in report.cases)


def test_collectives_match_any_source_and_nodes_widen_the_platform():
    # qdr-ib is round-robin (RayPlatform's loop); a collective runs any-source (MPI's
    # progress engine) and says so, and refuses an explicit round-robin.
    r = hopsim.simulate("qdr-ib", "barrier", ranks=4, algorithm="bruck", repetitions=1)
    assert r.parameters["reception"] == "any-source"
    with pytest.raises(InputError, match="reception: barrier matches any source"):
        hopsim.simulate("qdr-ib", "barrier", ranks=4, reception="round-robin")
    # 128 ranks at 1 per node need 128 nodes: the 64-node preset refuses, --nodes widens it.
    cmd = [sys.executable, "-m", "hopsim", "simulate", "--platform", "qdr-ib", "--workload",
           "barrier", "--ranks", "128", "--repetitions", "1", "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 2 and "need 128 nodes" in p.stderr and p.stdout == ""
    p = subprocess.run(cmd + ["--nodes", "128"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    # bruck on 128 ranks: 7 zero-byte steps of qdr-ib's latency and one polling pass each.
    assert json.loads(p.stdout)["results"]["rows"][0]["algorithm"] == "bruck"
    p = subprocess.run(cmd + ["--nodes", "0"], capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "nodes" in p.stderr


def test_a_scenario_sweeps_algorithms(tmp_path):
    from hopsim import scenarios

    f = tmp_path / "s.toml"
    f.write_text('name = "a"\nplatform = "qlogic-ib"\nworkload = "alltoall"\nranks = 8\n'
                 'sizes = [1024]\nrepetitions = 1\n[sweep]\n'
                 'algorithm = ["linear", "pairwise"]\n')
    outcome = scenarios.run(scenarios.load(str(f)))
    rows = [r.results["rows"][0] for r in outcome.results]
    assert [r["algorithm"] for r in rows] == ["linear", "pairwise"]
    # linear: one step, 7 messages sharing each link; pairwise: 7 steps of a latency each.
    assert rows[1]["t_max_us"] > rows[0]["t_max_us"]


def test_live_imb_runs_the_collective_benchmarks():
    from hopsim.live import mpirun
    from hopsim.workload import make_workload

    args = mpirun.tool_arguments("imb", make_workload("allreduce", 4, sizes=[0, 4, 1024]), None)
    assert args == ["Allreduce", "-npmin", "4", "-msglog", "0:10"]
    # No 0 asked: IMB skips it (-zero_size off); repetitions: at most that many (-iter).
    args = mpirun.tool_arguments("imb", make_workload("bcast", 4, sizes=[1, 1024], repetitions=50), None)
    assert args == ["Bcast", "-npmin", "4", "-msglog", "0:10", "-iter", "50", "-zero_size", "off"]
    # A forced algorithm runs live through coll/tuned's dynamic rules (tests/test_campaign.py
    # checks the numbers).
    work = make_workload("alltoall", 4, sizes=[0], algorithm="pairwise")
    assert mpirun.algorithm_arguments(work)[-2:] == ["coll_tuned_alltoall_algorithm", "2"]


def test_the_issue_command_prints_imb_block_at_4096_ranks():
    # Issue 19's "done means" command, with one size and one repetition (its full sweep
    # runs for hours: docs/performance.md) on the fast transport.
    out = subprocess.run([sys.executable, "-m", "hopsim", "simulate", "--workload", "alltoall", "--ranks", "4096",
                          "--ranks-per-node", "16", "--platform", "qdr-ib", "--nodes", "256", "--sizes", "1",
                          "--repetitions", "1", "--transport", "queue"], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert lines[1:3] == ["# Benchmarking Alltoall", "# #processes = 4096"]
    assert lines[4].split() == ["#bytes", "#repetitions", "t_min[usec]", "t_max[usec]", "t_avg[usec]"]
    size, reps, *stats = lines[5].split()
    assert (size, reps) == ("1", "1") and 0 < float(stats[0]) <= float(stats[2]) <= float(stats[1])
