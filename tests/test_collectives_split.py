"""The three algorithms that split the message, as Open MPI 4.1.4 runs them (coll_base_bcast.c:
ompi_coll_base_bcast_intra_split_bintree, ompi_coll_base_bcast_intra_scatter_allgather;
coll_base_reduce.c: ompi_coll_base_reduce_intra_redscat_gather), unsegmented (4.1's fixed
rules pass segsize 0), root 0.

Closed forms on the uncontended star of tests/test_collectives.py, derived by hand: latency
L = 10 us, 1000 B/us per NIC direction, s bytes alone cross in 10 + s/1000 us; under the
flow transport messages that share a NIC share its rate fairly once their latency is over,
under the queue transport a NIC sends its messages one after the other. Eager sends
complete when posted.
"""
from __future__ import annotations

import pytest

from hopsim import _engine

from test_collectives import row, times

C = _engine.collectives


def busy(steps):
    """(step index, sends, receives, reduce) of the steps that do something."""
    return [(k, *s) for k, s in enumerate(steps) if s[0] or s[1]]


# ---- schedules, message by message --------------------------------------------------

def test_split_binary_tree_schedule():
    # 6 ranks, 101 B: halves of ceil(101/2) = 51 (left subtree: odd ranks) and 50 (right).
    # Binary tree: 0 -> 1, 2; 1 -> 3, 5; 2 -> 4. Blocking sends: one per step. Then the pairs
    # (1, 2) and (3, 4) swap halves, and on an even count the root sends the right half to
    # the last rank (5, in the left subtree, unpaired).
    s = C.schedule("bcast", "split_binary_tree", 6, 101)
    assert busy(s[0]) == [(1, [(1, 51, 0)], 0, False), (2, [(2, 50, 0)], 0, False), (3, [(5, 50, 3)], 0, False)]
    assert busy(s[1]) == [(0, [], 1, False), (1, [(3, 51, 0)], 0, False), (2, [(5, 51, 0)], 0, False),
                          (3, [(2, 51, 3)], 1, False)]
    assert busy(s[2]) == [(0, [], 1, False), (1, [(4, 50, 0)], 0, False), (3, [(1, 50, 3)], 1, False)]
    assert busy(s[3]) == [(0, [], 1, False), (3, [(4, 51, 3)], 1, False)]
    assert busy(s[4]) == [(0, [], 1, False), (3, [(3, 50, 3)], 1, False)]
    assert busy(s[5]) == [(0, [], 1, False), (3, [], 1, False)]
    # 5 ranks (odd): no root hand-over; 4 (right) pairs with 3.
    assert busy(C.schedule("bcast", "split_binary_tree", 5, 10)[0]) == [
        (1, [(1, 5, 0)], 0, False), (2, [(2, 5, 0)], 0, False)]
    # One byte cannot be split: Open MPI runs the chain instead.
    assert C.schedule("bcast", "split_binary_tree", 3, 1)[1] == [([], 1, False), ([(2, 1, 0)], 0, False)]


def test_scatter_allgather_schedule():
    # 6 ranks, 10 B: blocks of ceil(10/6) = 2 B, rank 5's is empty. Steps: 0 receive,
    # 1..3 scatter sends for masks 4, 2, 1, then per mask the exchange with rank ^ mask
    # (steps 4, 5, 7) and the hand-over steps of mask 2 (6) and mask 4 (8: rh 2, 9: rh 1).
    s = C.schedule("bcast", "scatter_allgather", 6, 10)
    # The root scatters blocks 4-5 (2 B: block 5 is empty) to 4, 2-3 to 2, 1 to 1; then
    # exchanges block 0 with 1, blocks 0-1 with 2 and blocks 0-3 (8 B) with 4 (which
    # sends block 4, 2 B), and hands 4's blocks on to 2 (2 and 3 have no partner 6, 7).
    assert busy(s[0]) == [(1, [(4, 2, 0)], 0, False), (2, [(2, 4, 0)], 0, False), (3, [(1, 2, 0)], 0, False),
                          (4, [(1, 2, 4)], 1, False), (5, [(2, 4, 5)], 1, False), (7, [(4, 8, 7)], 1, False),
                          (8, [(2, 2, 8)], 0, False)]
    assert busy(s[1]) == [(0, [], 1, False), (4, [(0, 2, 4)], 1, False), (5, [(3, 4, 5)], 1, False),
                          (7, [(5, 8, 7)], 1, False), (8, [(3, 2, 8)], 0, False)]
    assert busy(s[2]) == [(0, [], 1, False), (3, [(3, 2, 0)], 0, False), (4, [(3, 2, 4)], 1, False),
                          (5, [(0, 4, 5)], 1, False), (8, [], 1, False)]
    assert busy(s[3]) == [(0, [], 1, False), (4, [(2, 2, 4)], 1, False), (5, [(1, 4, 5)], 1, False),
                          (8, [], 1, False)]
    assert busy(s[4]) == [(0, [], 1, False), (4, [(5, 2, 4)], 1, False), (7, [(0, 2, 7)], 1, False)]
    # 5 receives nothing in the scatter (its block is past the end) and sends 0 bytes.
    assert busy(s[5]) == [(4, [(4, 0, 4)], 1, False), (7, [(1, 2, 7)], 1, False)]
    # Fewer elements than ranks: Open MPI runs the linear bcast.
    assert C.schedule("bcast", "scatter_allgather", 6, 5)[0] == [
        ([(1, 5, 0), (2, 5, 0), (3, 5, 0), (4, 5, 0), (5, 5, 0)], 0, False)]


def test_reduce_rabenseifner_schedule():
    # 6 ranks, 16 floats (64 B): r = 2 extra ranks. 0 and 1 (2 and 3) swap halves of
    # 8 floats and combine; 1 (3) sends its combined right half to 0 (2) and is done.
    # Virtual ranks 0..3 = ranks 0, 2, 4, 5 halve (8 floats with distance 1, 4 with 2),
    # then gather to 0: distance 2 first (4 -> 0, 5 -> 2, 4 floats), then 2 -> 0 (8).
    s = C.schedule("reduce", "rabenseifner", 6, 64)
    assert busy(s[0]) == [(0, [(1, 32, 0)], 1, True), (1, [], 1, False), (2, [(2, 32, 2)], 1, True),
                          (3, [(4, 16, 3)], 1, True), (4, [], 1, False), (5, [], 1, False)]
    assert busy(s[1]) == [(0, [(0, 32, 0)], 1, True), (1, [(0, 32, 1)], 0, False)]
    assert busy(s[2]) == [(0, [(3, 32, 0)], 1, True), (1, [], 1, False), (2, [(0, 32, 2)], 1, True),
                          (3, [(5, 16, 3)], 1, True), (4, [], 1, False), (5, [(0, 32, 5)], 0, False)]
    assert busy(s[3]) == [(0, [(2, 32, 0)], 1, True), (1, [(2, 32, 1)], 0, False)]
    assert busy(s[4]) == [(2, [(5, 32, 2)], 1, True), (3, [(0, 16, 3)], 1, True), (4, [(0, 16, 4)], 0, False)]
    assert busy(s[5]) == [(2, [(4, 32, 2)], 1, True), (3, [(2, 16, 3)], 1, True), (4, [(2, 16, 4)], 0, False)]
    # Fewer elements than 2^floor(log2 n): the linear reduce.
    assert C.schedule("reduce", "rabenseifner", 6, 12)[3] == [([(0, 12, 0)], 0, False)]


# ---- closed forms -------------------------------------------------------------------

def test_split_binary_tree_times():
    # 3 ranks, 2000 B: halves of 1000. Flow: the root's two sends share its NIC, both in
    # at 10 + 2 = 12; 1 and 2 swap halves, in at 12 + 11 = 23. Ranks: 0, 23, 23.
    assert times(row("bcast", 3, 2000, "split_binary_tree", "flow")) == pytest.approx((0, 23, 46 / 3))
    # Queue: the root's sends leave one after the other, in at 11 and 12; 1 sends its
    # half at 11 (in at 2 at 22), 2 at 12 (in at 1 at 23). Ranks: 0, 23, 22.
    assert times(row("bcast", 3, 2000, "split_binary_tree", "queue")) == pytest.approx((0, 23, 15))
    # 4 ranks, flow: the root's three sends (to 1, 2 and the last rank 3) share its NIC, in
    # at 13. 1 forwards its half to 3 and swaps with 2 at once: its two sends share its
    # NIC, in at 13 + 12 = 25; 2's half is in at 1 at 13 + 11 = 24. Ranks: 0, 24, 25, 25.
    assert times(row("bcast", 4, 2000, "split_binary_tree", "flow")) == pytest.approx((0, 25, 18.5))


def test_scatter_allgather_times():
    # 2 ranks, 2000 B (blocks of 1000). Flow: the root's scatter send and its exchange
    # send share its NIC, in at 12; 1's exchange send leaves at 12, in at 23. Ranks: 23, 12.
    assert times(row("bcast", 2, 2000, "scatter_allgather", "flow")) == pytest.approx((12, 23, 17.5))
    # Queue: in at 11 and 12; 1 sends at 11, in at 22. Ranks: 22, 12.
    assert times(row("bcast", 2, 2000, "scatter_allgather", "queue")) == pytest.approx((12, 22, 17))
    # 4 ranks, 4000 B, flow (blocks of 1000). At 0 the root sends A (2000 B to 2), B (1000
    # to 1) and its exchange C (1000 to 1): a third of its NIC each from 10, B and C in at
    # 13, A alone after that, in at 14. At 13, 1 sends D (1000 to 0) and E (blocks 0-1,
    # 2000 to 3). At 14, 2 sends F (block 3 to 3) and G (block 2 to 3). From 23 D and E
    # share 1's NIC (500 each); from 24 E, F, G share 3's inbound NIC (333 each) and D gets
    # the rest of 1's (667): D is in at 24.75, F and G at 27, E at 27.5, when 3 is done
    # (3's exchange with 1 and its sends I, J, posted at 27, are eager). At 24.75 the root
    # sends H (blocks 0-1 to 2), in at 36.75. From 37 I (block 3 to 2) and J (blocks 2-3 to
    # 1) share 3's NIC: I in at 39, J at 40, when 1 is done. 2 then sends K (blocks 2-3 to
    # 0) at 39 and is done (H came), K is in at 51. Ranks: 51, 40, 39, 27.5.
    assert times(row("bcast", 4, 4000, "scatter_allgather", "flow")) == pytest.approx((27.5, 51, 157.5 / 4))


@pytest.mark.parametrize("transport", ("flow", "queue"))
def test_reduce_rabenseifner_times(transport):
    # 4 ranks, 1000 floats, reduction 0.5 ns/B. Halving: 0 <-> 1 and 2 <-> 3 swap 500
    # floats (2000 B), in at 12, combined at 13; 0 <-> 2 and 1 <-> 3 swap 250 (1000 B), in
    # at 24, combined at 24.5. Gather: 2 -> 0 and 3 -> 1 (250 floats) in at 35.5, then
    # 1 -> 0 (500 floats) in at 47.5; nothing combined. Ranks: 47.5, 35.5, 24.5, 24.5.
    assert times(row("reduce", 4, 4000, "rabenseifner", transport, c=0.5)) == pytest.approx((24.5, 47.5, 33))
    # 3 ranks, 1000 floats, free arithmetic. 0 <-> 1 swap halves (2000 B), in at 12; 1
    # sends its combined half to 0 (in at 24) and is done. 2 sent its half to 0 at 0 (in at
    # 12); 0 answers at 24 (in at 36), and 2 then gathers its 500 floats back to 0 (in at
    # 48). Ranks: 48, 12, 36.
    assert times(row("reduce", 3, 4000, "rabenseifner", transport)) == pytest.approx((12, 48, 32))
