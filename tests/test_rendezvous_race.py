"""A rendezvous's order and race (docs/model.md, "Protocol"), read from the engine's trace:
a connection delivers in the order it staged, a posted receive answers a request as it
arrives, a control message waits behind at most what its node's connections keep queued
(Linux's two 64 KiB segments, or network.nic_queue_bytes), and with a race jitter the
second pair of a both-ways exchange goes one direction after the other."""
import itertools

import pytest

from hopsim import simulate
from hopsim.platforms import Platform

L_US = 5.0
GBPS = 1.0
S = 1 << 20
WIRE_US = S * 8 / (GBPS * 1e3)   # one message's bytes on the link: 8389 us


def platform(**kw) -> Platform:
    return Platform(**{"name": "p", "nodes": 4, "cores": 2, "latency_us": L_US,
                       "bandwidth_gbps": GBPS, "eager_threshold_bytes": 65535, **kw})


def rows(result) -> list[dict]:
    cols = result.trace["columns"]
    return [dict(zip(cols, r)) for r in result.trace["rows"]]


@pytest.mark.parametrize("transport", ["flow", "queue"])
def test_a_connection_delivers_in_the_order_it_staged(transport):
    # Noise on every message lets a later transfer of a connection end first on the wire.
    # Two ranks: IMB Exchange's two messages of a repetition go to the same rank.
    p = platform(nodes=2, transport=transport, noise_scope="message", noise_median_us=200.0,
                 noise_sigma=1.0)
    t = rows(simulate(p, "exchange", ranks=2, sizes=[0, 4096, 200000], repetitions=20, trace=True))
    overtaken = delivered_out_of_order = 0
    by_conn: dict = {}
    for r in t:                       # the trace's rows are in delivery order
        by_conn.setdefault((r["from"], r["to"]), []).append(r)
    for conn in by_conn.values():
        for a, b in zip(conn, conn[1:]):
            overtaken += b["arrived_us"] < a["arrived_us"]
            delivered_out_of_order += b["staged_us"] < a["staged_us"] or b["delivered_us"] < a["delivered_us"]
    assert overtaken > 0               # the transport did reorder some
    assert delivered_out_of_order == 0


def test_without_jitter_a_both_ways_exchange_loses_no_race():
    # Both messages of a pair end at the same date: each rank answers the other's second
    # request itself, and the second pair moves both ways at once: two messages' time.
    r = simulate(platform(nodes=2), "exchange", ranks=2, sizes=[S], repetitions=10)
    t = r.results["rows"][0]["t_avg_us"]
    assert 2 * WIRE_US < t < 2 * WIRE_US + 20 * L_US


def test_with_jitter_the_second_pair_goes_one_way_after_the_other():
    # Jitter of 1% of a message's 8389 us: the two ends' arrivals differ by more than the
    # 5 us latency that decides the race in most repetitions (about 92% of them).
    p = platform(nodes=2, rate_jitter=1e-2)
    r = simulate(p, "exchange", ranks=2, sizes=[S], repetitions=10, trace=True)
    t = r.results["rows"][0]["t_avg_us"]
    # A race lost: one rank serves the other's answer before its own, which then leaves
    # behind a whole message: three messages' time per repetition instead of two.
    assert 2.7 * WIRE_US < t < 3.1 * WIRE_US
    data = [x for x in rows(r) if x["what"] == "data"]
    serialised = 0
    for rep, pair in itertools.groupby(data, key=lambda x: x["seq"]):
        second = list(pair)[2:]
        a, b = sorted(second, key=lambda x: x["started_us"])
        serialised += b["started_us"] >= a["arrived_us"] - 1e-6
    assert serialised >= 8


def test_a_posted_receive_answers_a_request_as_it_arrives():
    # A pass of 50 us: a request that waited for the next pass would be answered up to
    # 50 us after it came; IMB's blocking receive is posted, so it is answered at once.
    p = platform(nodes=2, pass_us=50.0)
    t = rows(simulate(p, "exchange", ranks=2, sizes=[S], repetitions=2, trace=True))
    first = [x for x in t if x["seq"] == 0]
    request = next(x for x in first if x["what"] == "request" and x["from"] == 1)
    answer = next(x for x in first if x["what"] == "answer" and x["from"] == 0)
    assert answer["staged_us"] == pytest.approx(request["delivered_us"], abs=1e-9)


# A slow token bucket keeps a 1 MiB message in its node's NIC for about 80 ms; the rank
# that lost a race stages its answer behind its own message going out.
SLOW_BUCKET = {"bucket_gbps": 0.1, "bucket_burst_bytes": 16384.0, "bandwidth_gbps": 10.0, "rate_jitter": 1e-2}
BUCKET_BYTES_PER_S = 0.1e9 / 8


@pytest.mark.parametrize("queue_bytes, bound_us", [
    # Linux's tcp_small_queue_check: 2 * truesize of a 64 KiB segment, beyond 1 ms at this rate.
    (0, 2 * 65536 / BUCKET_BYTES_PER_S * 1e6),
    # Measured (hopsim live --sample-nic-queue): that many bytes at the bucket's rate.
    (300000, 300000 / BUCKET_BYTES_PER_S * 1e6),
])
def test_a_control_message_waits_behind_its_nodes_bytes_for_at_most_its_queue(queue_bytes, bound_us):
    p = platform(nodes=2, nic_queue_bytes=queue_bytes, **SLOW_BUCKET)
    t = rows(simulate(p, "exchange", ranks=2, sizes=[S], repetitions=4, trace=True))
    waits = [x["started_us"] - x["staged_us"] for x in t if x["what"] != "data"]
    assert max(waits) == pytest.approx(bound_us, rel=1e-9)   # some waited the whole bound
    assert min(waits) == pytest.approx(0, abs=1e-9)


def test_on_a_fast_bucket_the_default_queue_is_1_ms_of_its_rate():
    # 10 Gbit/s: 1 ms is 1.22 MB, more than two 64 KiB segments (sk_pacing_shift 10).
    p = platform(nodes=2, bucket_gbps=10.0, bucket_burst_bytes=16384.0, bandwidth_gbps=100.0,
                 rate_jitter=1e-2)
    t = rows(simulate(p, "exchange", ranks=2, sizes=[16 * S], repetitions=4, trace=True))
    waits = [x["started_us"] - x["staged_us"] for x in t if x["what"] != "data"]
    assert max(waits) == pytest.approx(1e6 / 1024, rel=1e-9)


# IMB Exchange on 2 nodes of 2 ranks, block: rank 1's left neighbour (rank 0) is on its
# node, its right one (rank 2) across. A slow on-node path: rank 1 copies rank 0's 1 MiB
# in for 16.8 ms, while rank 2's answer to rank 1's request comes after 2 latencies.
SLOW_COPY = {"intra_bandwidth_gbps": 0.5, "intra_latency_us": 1.0}
COPY_US = S * 8 / (0.5 * 1e3)


def _block_first_repetition(**kw):
    p = platform(nodes=2, **SLOW_COPY, **kw)
    r = simulate(p, "exchange", ranks=4, ranks_per_node=2, sizes=[S], repetitions=3, trace=True)
    return r, [x for x in rows(r) if x["seq"] == 0]


def test_a_rank_copying_an_on_node_message_in_answers_its_next_receive_before_moving_data():
    r, first = _block_first_repetition()
    data_1_to_2 = next(x for x in first if x["what"] == "data" and x["from"] == 1 and x["to"] == 2)
    answer_1_to_2 = next(x for x in first if x["what"] == "answer" and x["from"] == 1 and x["to"] == 2)
    copy_0_to_1 = next(x for x in first if x["what"] == "data" and x["from"] == 0 and x["to"] == 1)
    # Rank 2's answer reached rank 1 within microseconds; rank 1 moved its data only when
    # its copy was done, after posting its receive from rank 2 and answering it.
    assert copy_0_to_1["delivered_us"] - copy_0_to_1["started_us"] == pytest.approx(COPY_US, rel=1e-3)
    assert data_1_to_2["staged_us"] == pytest.approx(copy_0_to_1["delivered_us"], abs=1e-6)
    assert answer_1_to_2["staged_us"] <= data_1_to_2["staged_us"]
    # Both cross-node messages then move at once, each direction on its own link (where
    # a library free during the copy had moved rank 1's data at once and answered rank 2
    # only after the copy: rank 2's message then ended a whole message later).
    data_2_to_1 = next(x for x in first if x["what"] == "data" and x["from"] == 2 and x["to"] == 1)
    assert data_2_to_1["delivered_us"] < data_1_to_2["delivered_us"] + 10 * L_US



# IMB Exchange on 4 nodes of 2 ranks: cyclic puts each rank's two neighbours on the two
# other nodes, so a node sends on four connections at once; block sends on two (each
# rank's other neighbour is on its node). A control message waits one share of the NIC's
# queue per other connection with bytes in it (each TCP socket keeps its own share there).
SHARE_BYTES = 100000
SHARE_US = SHARE_BYTES / BUCKET_BYTES_PER_S * 1e6


def _control_waits(placement):
    p = platform(nodes=4, nic_queue_bytes=SHARE_BYTES, **SLOW_BUCKET)
    t = rows(simulate(p, "exchange", ranks=8, ranks_per_node=2, placement=placement, sizes=[S],
                      repetitions=3, trace=True))
    return [x["started_us"] - x["staged_us"] for x in t if x["what"] != "data"]


def test_with_two_connections_a_node_keeps_one_share_ahead_of_an_answer():
    assert max(_control_waits("block")) == pytest.approx(SHARE_US, rel=1e-9)


def test_with_four_connections_an_answer_waits_behind_the_other_connections_shares():
    waits = _control_waits("cyclic")
    assert max(waits) > 1.5 * SHARE_US                  # one share was the bound before
    assert max(waits) <= 3 * SHARE_US * (1 + 1e-9)      # three other connections at most
    # Each wait is whole shares, or the node's backlog where that was less.
    assert any(w == pytest.approx(2 * SHARE_US, rel=1e-9) for w in waits)
