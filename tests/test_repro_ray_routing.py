"""The ray-routing reproduction (scenarios/reproductions/ray_routing.py) on its --quick
size: what it runs, its tables, and the mechanics behind the numbers, each checked
against values worked out by hand."""
from __future__ import annotations

import pytest

from hopsim import platforms
from hopsim.scenarios.reproductions import _ray_network_test as rnt
from hopsim.scenarios.reproductions import ray_routing as rr
from hopsim.scenarios.study import Study


def _study(tmp_path, seed=1, name="out"):
    s = Study(rr.NAME, rr.TITLE, tmp_path / name, seed=seed, quick=True)
    rr.run(s)
    return s


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    return _study(tmp_path_factory.mktemp("rr"))


def _rows(study, key):
    t = study.tables[key]
    return [dict(zip(t["columns"], r)) for r in t["rows"]]


def test_kautz_stands_in_at_the_nearest_size_below():
    # K(d, D) has (d + 1) d^(D - 1) vertices: K(31, 2) = 32 * 31 = 992 and K(32, 2) = 1056
    # bracket 1024; K(7, 2) = 56 is the largest at most 64 (K(2, 5) = 48, K(4, 3) = 80);
    # K(3, 2) = 12 fits exactly.
    assert rr.kautz_ranks(1024) == 992
    assert rr.kautz_ranks(64) == 56
    assert rr.kautz_ranks(12) == 12
    assert rr.kautz_ranks(4096) == 4032


def test_cases_are_the_issue_s_runs():
    s = Study(rr.NAME, rr.TITLE, "unused", quick=False)
    qdr, ql = platforms.load("qdr-ib"), platforms.load("qlogic-ib")
    overlays, pair, grid = rr.cases(s, qdr, ql)
    assert [(c.overlay, c.ranks, c.seed) for c in overlays] == [
        ("complete", 1024, 1), ("debruijn", 1024, 1), ("kautz", 992, 1), ("random", 1024, "ray")]
    assert all(c.reception == "round-robin" and c.per_node == 16 and c.exchanges == 1000
               for c in overlays + pair)
    assert [(c.overlay, c.ranks) for c in pair] == [("complete", 512), ("random", 512)]
    assert [(c.ranks, c.reception) for c in grid] == [
        (r, p) for r in (36, 120, 1008) for p in ("any-source", "round-robin")]
    # 1008 ranks at 12 per node need 84 nodes (the preset has 10): scaled, block placement.
    big = grid[-1]
    assert (big.nodes, big.placement) == (84, "block")
    assert "--nodes" in big.argv() and big.argv()[big.argv().index("--nodes") + 1] == "84"
    # The 1024-rank cluster is the preset as it is: 64 nodes of 16.
    assert overlays[0].nodes == 64 and "--nodes" not in overlays[0].argv()


def test_a_partly_filled_node_is_a_block_map():
    c = rnt.Case(platforms.load("qdr-ib"), 56, 16, "kautz", "round-robin", 1)
    assert c.placement == [0] * 16 + [1] * 16 + [2] * 16 + [3] * 8
    assert c.argv() is None  # no command-line flag says "block, last node partly filled"


def test_tables_and_columns(quick):
    assert list(quick.tables) == ["published", "qdr-overlays", "qlogic"]
    assert quick.tables["published"]["columns"][6:9] == [
        "published AverageForAllRanks us", "hopsim AverageForAllRanks us", "average error %"]
    assert "speed-up over complete" in quick.tables["qdr-overlays"]["columns"]
    assert list(quick.figures) == ["relay-load"]
    assert set(quick.platforms) == {"qdr-ib", "qlogic-ib"}
    built = [r["built"] for r in _rows(quick, "qdr-overlays")]
    assert built[:3] == ["complete graph", "de Bruijn B(2, 6)", "Kautz K(7, 2)"]
    assert built[3].startswith("RayPlatform's random graph")


def test_published_rows_carry_the_published_figures_and_their_error(quick):
    rows = {(r["ranks"], r["reception"]): r for r in _rows(quick, "published")}
    # docs/platforms.md: QLogic any-source 16 us (36 ranks), 19 us (120); round-robin 18, 23.
    assert {k: r["published AverageForAllRanks us"] for k, r in rows.items()} == {
        (36, "any-source"): 16.0, (36, "round-robin"): 18.0,
        (120, "any-source"): 19.0, (120, "round-robin"): 23.0}
    r = rows[(120, "any-source")]
    assert r["average error %"] == pytest.approx(
        (r["hopsim AverageForAllRanks us"] - 19.0) / 19.0 * 100)
    assert r["role"] == "prediction" and rows[(36, "any-source")]["role"].startswith("fitted")
    # The same four runs on the presets' own flow transport, beside the queue's.
    assert r["flow error %"] == pytest.approx(
        (r["hopsim on flow AverageForAllRanks us"] - 19.0) / 19.0 * 100)


def test_flow_checks_are_the_published_qlogic_runs_on_fair_sharing():
    s = Study(rr.NAME, rr.TITLE, "unused", quick=False)
    _, _, grid = rr.cases(s, platforms.load("qdr-ib"), platforms.load("qlogic-ib"))
    flows = rr.flow_checks(grid)
    assert [(c.ranks, c.reception, c.transport) for c in flows] == [
        (36, "any-source", "flow"), (36, "round-robin", "flow"),
        (120, "any-source", "flow"), (120, "round-robin", "flow")]
    assert all(c.transport == "queue" for c in grid)


def test_the_table_shows_the_engine_s_ray_statistics(quick):
    # The same run straight from hopsim.simulate: the table must show its figures.
    row = _rows(quick, "qdr-overlays")[1]
    from hopsim import simulate
    r = simulate("qdr-ib", "roundtrip", 64, 16, seed=1, request_bytes=4000, reply_bytes=0,
                 exchanges=rr.QUICK_EXCHANGES, overlay="debruijn", reception="round-robin",
                 transport="queue").results
    assert row["AverageForAllRanks us"] == r["ray_average_for_all_ranks_us"]
    assert row["StandardDeviation us"] == r["ray_standard_deviation_us"]


def test_complete_graph_has_one_hop_no_relay_and_every_rank_as_connection(quick):
    for row in _rows(quick, "qdr-overlays"):
        if row["built"] == "complete graph":
            assert row["mean hops"] == 1
            assert row["relays per rank (run) mean"] == 0 and row["relays per rank (run) max"] == 0
            assert row["connections per rank"] == row["ranks"]
            assert row["speed-up over complete"] == 1


def test_route_lengths_end_at_the_diameter_formula():
    # B(2, 6): words of D = 6 binary digits, so at most 6 hops (log2 64); K(7, 2): 2 hops.
    qdr = platforms.load("qdr-ib")
    db = rr._route_stats(rnt.Case(qdr, 64, 16, "debruijn", "round-robin", 1))
    kz = rr._route_stats(rnt.Case(qdr, 56, 16, "kautz", "round-robin", 1))
    assert max(db.route_lengths) == db.diameter == 6
    assert max(kz.route_lengths) == kz.diameter == 2
    # Every ordered pair is routed once: n^2 routes, n of them of 0 hops.
    assert sum(db.route_lengths.values()) == 64 * 64 and db.route_lengths[0] == 64
    # A route of h hops has h - 1 relay events: the per-rank loads add up to that.
    for st in (db, kz):
        assert sum(st.relays) == sum((h - 1) * k for h, k in st.route_lengths.items() if h)
    # K(7, 2): 56 ranks, 7 out-neighbours each, no self-loop: of the 56 * 55 ordered pairs
    # 56 * 7 are one hop and the other 2688 two hops, one relay each; every word is the
    # middle of as many routes, so 2688 / 56 = 48 per rank.
    assert kz.relays == [48] * 56


def test_the_run_s_relays_are_its_transfers_beyond_the_end_to_end_messages():
    qdr = platforms.load("qdr-ib")
    ranks, ex = 16, 5
    r = rnt.run_case(rnt.Case(qdr, ranks, 16, "debruijn", "round-robin", ex))
    res = r["results"]
    messages = 2 * ranks * ex           # a request and a reply per round trip
    relays = round(res["relays"]["mean"] * ranks)
    assert r["messages"] == round(res["hops"]["mean"] * messages)
    assert relays == r["messages"] - messages


def test_relay_load_is_not_uniform_on_de_bruijn(quick):
    rows = {r["built"]: r for r in _rows(quick, "qdr-overlays")}
    db = rows["de Bruijn B(2, 6)"]
    # The all-zero and all-one words loop to themselves and relay nothing.
    assert db["all-pairs relays min"] == 0
    assert db["all-pairs relays max"] > 1.25 * db["all-pairs relays mean"]
    assert db["all-pairs relays SD (Ray's)"] > 0
    assert rows["Kautz K(7, 2)"]["all-pairs relays SD (Ray's)"] == 0


def test_deterministic_with_the_seed_and_whatever_the_workers(tmp_path, quick, monkeypatch):
    monkeypatch.setattr(rnt, "cores", lambda: 1)
    again = _study(tmp_path)
    assert again.tables == quick.tables
    assert again.files()["relay-load.png"] == quick.files()["relay-load.png"]
    case = rnt.Case(platforms.load("qdr-ib"), 64, 16, "debruijn", "round-robin", 5, seed=2)
    other = rnt.run_case(case)["results"]["ray_average_for_all_ranks_us"]
    same = rnt.run_case(rnt.Case(platforms.load("qdr-ib"), 64, 16, "debruijn", "round-robin", 5,
                                 seed=1))["results"]["ray_average_for_all_ranks_us"]
    assert other != same


def test_error_and_per_hop_helpers():
    assert rnt.error_percent(110.0, 100.0) == pytest.approx(10.0)
    assert rnt.error_percent(None, 16.0) is None and rnt.error_percent(15.0, None) is None
    # 40 us round trip over 2 hops each way: 10 us a hop; no routing: one hop each way.
    assert rnt.per_hop_us({"rtt_us": {"mean": 40.0}, "hops": {"mean": 2.0}}) == 10.0
    assert rnt.per_hop_us({"rtt_us": {"mean": 40.0}}) == 20.0
    assert "no slower" in rr._reading(0.1) and "fastest" in rr._reading(-0.5)
    assert "slower" in rr._reading(0.5)
