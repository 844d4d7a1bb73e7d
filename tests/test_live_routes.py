"""live/routes.py: the route table hopbench replays, written and read back without an MPI
run (tests/test_live_hopbench.py checks that hopbench walks it as the engine does)."""
from hopsim.live import routes


def test_a_de_bruijn_table_reads_back_as_worked_out_by_hand(tmp_path):
    # B(2, 2): ranks 0..3 are the words 00, 01, 10, 11; a hop prepends a digit and drops
    # the last (u -> c + u[:-1]). A rank's connection list is its in-neighbours and
    # itself: 01 is reached from 10 and 11, so rank 1 holds [1, 2, 3]; 00 from 00 and 01.
    # 00 -> 01 prepends 1 (10), then 0 (01); 11 -> 00 prepends 0 (01), then 0 (00).
    path = routes.write(tmp_path / "r.txt", "debruijn", 4, 2)
    assert path.read_text().splitlines()[:2] == ["hopbench-routes 1 4", "conn 0 2 0 1"]
    conns, table = routes.read(path)
    assert conns == {0: [0, 1], 1: [1, 2, 3], 2: [0, 1, 2], 3: [2, 3]}
    assert table[(0, 1)] == [0, 2, 1] and table[(3, 0)] == [3, 1, 0]
    assert table[(2, 2)] == [2] and len(table) == 16
