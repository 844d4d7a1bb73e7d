"""hopsim.topologies against networkx and docs/overlays.md: routes, statistics, Ray files, CLI, plots."""
import json
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

from hopsim import topologies as topo

# (family, ranks, degree): a few sizes of every family, small enough for all n^2 routes.
CASES = [
    ("complete", 9, 0), ("debruijn", 16, 2), ("debruijn", 81, 3), ("debruijn", 64, 0),
    ("kautz", 12, 2), ("kautz", 36, 3), ("kautz", 20, 0), ("random", 32, 0), ("random", 100, 0),
    ("random", 64, "ray"),
    ("group", 19, 0), ("group", 64, 0), ("polytope", 32, 0), ("polytope", 27, 3),
    ("hypercube", 16, 0), ("torus", 16, 0), ("torus", 25, 5), ("torus", 64, 4),
]


def hopsim(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def build(family, ranks, degree):
    # ("random", n, "ray"): RayPlatform's own random graph.
    if degree == "ray":
        return topo.build_overlay(family, ranks, seed="ray")
    return topo.build_overlay(family, ranks, degree, seed=11)


def all_routes(overlay):
    walker = overlay.fresh()  # the order statistics use: s ascending, then d ascending
    return {(s, d): route for s in range(overlay.size) for d, route in enumerate(walker.routes_from(s))}


@pytest.mark.parametrize("family,ranks,degree", CASES)
def test_engine_routes_are_networkx_shortest_paths(family, ranks, degree):
    overlay = build(family, ranks, degree)
    G = topo.to_networkx(overlay)
    assert sorted(G.nodes) == list(range(ranks))
    dist = dict(nx.all_pairs_shortest_path_length(G))
    for (s, d), route in all_routes(overlay).items():
        assert route[0] == s and route[-1] == d
        assert all(G.has_edge(u, v) for u, v in zip(route, route[1:])), route
        assert len(route) - 1 == dist[s][d], (s, d, route)


@pytest.mark.parametrize("family,ranks,degree", CASES)
def test_statistics_agree_with_networkx(family, ranks, degree):
    overlay = build(family, ranks, degree)
    st = topo.route_statistics(overlay)
    G = topo.to_networkx(overlay)
    assert st.arcs == G.number_of_edges()
    assert st.diameter == nx.diameter(G)
    assert st.mean_hops == pytest.approx(nx.average_shortest_path_length(G))
    assert sum(st.route_lengths.values()) == ranks * ranks
    assert st.route_lengths[0] == ranks
    assert st.out_degrees == [G.out_degree(r) for r in range(ranks)]
    assert st.connections == [len(set(G.predecessors(r)) | {r}) for r in range(ranks)]
    # Every route of h hops has h - 1 relays: the totals must agree.
    assert sum(st.relays) == sum((h - 1) * c for h, c in st.route_lengths.items() if h > 0)
    relays = [0] * ranks
    for route in all_routes(overlay).values():
        for r in route[1:-1]:
            relays[r] += 1
    assert st.relays == relays


def test_worked_example_de_bruijn_2_4():
    overlay = topo.build_overlay("debruijn", 16, degree=2)
    assert (overlay.degree, overlay.digits) == (2, 4)
    assert overlay.out_neighbors(0) == [0, 8]
    assert sorted(topo.debruijn_graph(16, degree=2).successors(0)) == [0, 8]
    assert overlay.route(0, 1) == [0, 8, 4, 2, 1]
    assert overlay.route(0, 2) == [0, 8, 4, 2]
    st = topo.route_statistics(overlay)
    assert st.route_lengths == {0: 16, 1: 30, 2: 54, 3: 82, 4: 74}
    assert st.relay_mean == 27.5
    assert st.to_json()["route_lengths"] == {"0": 16, "1": 30, "2": 54, "3": 82, "4": 74}


def test_family_generators_match_their_definitions():
    b, D = 3, 3
    G = topo.debruijn_graph(b ** D, degree=b)
    digit = lambda i, p: i // b ** p % b  # noqa: E731
    expected = {(i, j) for i in range(27) for j in range(27)
                if all(digit(i, p) == digit(j, p - 1) for p in range(1, D))}
    assert set(G.edges) == expected
    K = topo.kautz_graph(4032)
    assert (K.graph["degree"], K.graph["digits"]) == (63, 2)
    assert all(d == 63 for _, d in K.out_degree) and nx.number_of_selfloops(K) == 0
    Q = topo.hypercube_graph(16)
    assert nx.is_isomorphic(Q.to_undirected(), nx.hypercube_graph(4))
    T = topo.torus_graph(25, degree=5)
    assert nx.is_isomorphic(T.to_undirected(), nx.grid_2d_graph(5, 5, periodic=True))
    R = topo.random_graph(64, seed=2)
    assert R.number_of_edges() == 2 * (64 * 6 // 2) and nx.is_strongly_connected(R)
    # RayPlatform's complete graph lists no self-connection; the reception list has them all.
    C = topo.build_overlay("complete", 5)
    assert topo.complete_graph(5).number_of_edges() == 20 and C.connection_list(2) == [0, 1, 2, 3, 4]
    assert sorted(topo.group_graph(17).successors(8)) == [0, 8, 9, 10, 11, 12, 13, 14, 15, 16]


def test_from_networkx_routes_any_graph_by_shortest_paths():
    G = nx.petersen_graph()  # undirected: both directions
    overlay = topo.from_networkx(G, seed=3)
    assert overlay.family == "user" and overlay.size == 10
    dist = dict(nx.all_pairs_shortest_path_length(G))
    for (s, d), route in all_routes(overlay).items():
        assert len(route) - 1 == dist[s][d]
    named = nx.DiGraph([("b", "c"), ("c", "a"), ("a", "b"), ("a", "c")])
    ring = topo.from_networkx(named, family="ring")  # ranks in sorted order: a=0, b=1, c=2
    assert ring.family == "ring"
    assert ring.out_neighbors(0) == [1, 2] and ring.route(1, 0) == [1, 2, 0]
    with pytest.raises(ValueError, match="cannot reach"):
        topo.from_networkx(nx.DiGraph([(0, 1), (1, 2)]))


def test_same_seed_same_routes_other_seed_other_graph():
    a, b = topo.build_overlay("random", 200, seed=5), topo.build_overlay("random", 200, seed=5)
    assert a.arcs() == b.arcs()
    assert all_routes(a) == all_routes(b)
    assert topo.build_overlay("random", 200, seed=6).arcs() != a.arcs()


def test_sizes_and_errors():
    assert topo.nearest_sizes("kautz", 4000) == (topo.Shape(3906, 62, 2), topo.Shape(4032, 63, 2))
    assert topo.nearest_sizes("debruijn", 3) == (None, topo.Shape(4, 2, 2))
    assert topo.shape("debruijn", 4096) == topo.Shape(4096, 2, 12)  # Ray's default degree 2
    assert topo.shape("debruijn", 1024) == topo.Shape(1024, 2, 10)
    assert topo.shape("debruijn", 4096, 4) == topo.Shape(4096, 4, 6)
    with pytest.raises(ValueError, match=r"nearest sizes 3906 \(d=62, D=2\) and 4032 \(d=63, D=2\)"):
        topo.build_overlay("kautz", 4000)
    with pytest.raises(ValueError, match="debruijn: degree 3 does not fit 4096 ranks; .*"
                                         "degrees that fit 4096 ranks: 2, 4, 8, 16, 64"):
        topo.build_overlay("debruijn", 4096, degree=3)
    with pytest.raises(ValueError, match="kautz: degree 4 does not fit 12 ranks"):
        topo.shape("kautz", 12, 4)
    assert topo.build_overlay("debruijn", 4096, degree=4).degree == 4
    with pytest.raises(ValueError, match='seed "ray" applies to the random family only'):
        topo.build_overlay("kautz", 12, seed="ray")
    with pytest.raises(TypeError, match="from_networkx"):
        topo.route_statistics(nx.cycle_graph(4))


@pytest.mark.parametrize("family,ranks,degree", [("debruijn", 16, 2), ("torus", 16, 0), ("random", 40, 0)])
def test_ray_files_round_trip(tmp_path, family, ranks, degree):
    overlay = topo.build_overlay(family, ranks, degree, seed=4)
    st = topo.route_statistics(overlay)
    paths = topo.write_ray_files(overlay, tmp_path / "ray")
    assert [p.name for p in paths] == ["Connections.txt", "Routes.txt", "RelayEvents.txt", "Summary.txt"]
    back = topo.read_ray_files(tmp_path / "ray")
    assert set(back["connections"].edges) == set(overlay.arcs())
    if overlay.has_load_counters:
        # RayPlatform's files: no routes, relay events from one shared load table.
        assert (tmp_path / "ray" / "Routes.txt").read_text() == topo.rayfiles.DYNAMIC_ROUTES + "\n"
        assert back["routes"] == {} and back["relay_events"] == st.file_relays
        assert sum(st.file_relays) == sum(st.relays) and st.file_relays != st.relays
        return
    assert back["routes"] == all_routes(overlay)
    assert back["relay_events"] == st.relays == st.file_relays
    # The relay counts of the file are those of its own routes.
    relays = [0] * ranks
    for route in back["routes"].values():
        for r in route[1:-1]:
            relays[r] += 1
    assert relays == back["relay_events"]
    s = back["summary"]
    assert (s["type"], s["vertices"], s["arcs"], s["arcs_in_complete_graph"]) == \
        (overlay.family, ranks, st.arcs, ranks * (ranks - 1))
    assert s["route_lengths"] == st.route_lengths
    assert s["out_degree_counts"] == st.out_degree_counts
    assert s["relay_mean"] == pytest.approx(st.relay_mean, rel=1e-5)
    assert s["relay_sd"] == pytest.approx(st.relay_ray_sd, rel=1e-5)  # RayPlatform's formula
    again = topo.write_ray_files(topo.build_overlay(family, ranks, degree, seed=4), tmp_path / "again")
    assert [p.read_bytes() for p in again] == [p.read_bytes() for p in paths]  # same seed, same bytes


def test_summary_has_rayplatform_layout(tmp_path):
    topo.write_ray_files(topo.build_overlay("debruijn", 16, 2), tmp_path)
    lines = (tmp_path / "Summary.txt").read_text().splitlines()
    assert lines[:5] == ["Type: debruijn", "", "NumberOfVertices: 16", "NumberOfArcs: 32",
                         "NumberOfArcsInCompleteGraph: 240"]
    assert "        1    30    11.7188%" in lines
    assert lines[-1] == "        Total    256    100.00%"
    assert "   Average: 27.5" in lines
    assert (tmp_path / "Routes.txt").read_text().splitlines()[:3] == \
        ["#Source\tDestination\tHops\tRoute", "0\t0\t0\t0", "0\t1\t4\t0 8 4 2 1"]


def test_plot_files(tmp_path):
    small = topo.plot_overlay(topo.build_overlay("kautz", 12, 2), tmp_path / "k12.png")
    large = topo.plot_overlay(topo.build_overlay("complete", 100), tmp_path / "c100.png")
    for path in (small, large):
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c100.png", "k12.png"]  # no staging left


def test_cli_json_schema():
    proc = hopsim("topology", "debruijn", "--ranks", 16, "--degree", 2, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert list(out) == ["family", "ranks", "degree", "diameter", "arcs", "mean_hops",
                         "route_lengths", "relays"]
    assert out["route_lengths"] == {"0": 16, "1": 30, "2": 54, "3": 82, "4": 74}
    assert (out["family"], out["ranks"], out["degree"], out["diameter"], out["arcs"]) == \
        ("debruijn", 16, 2, 4, 32)
    assert out["mean_hops"] == pytest.approx(680 / 240)
    assert list(out["relays"]) == ["mean", "sd", "ray_sd", "max"] and out["relays"]["mean"] == 27.5
    # mean 27.5: RayPlatform truncates each deviation, so its figure is below the population SD
    assert out["relays"]["ray_sd"] < out["relays"]["sd"]
    assert out["relays"]["max"] == 40


def test_cli_text_and_outputs(tmp_path):
    proc = hopsim("topology", "kautz", "--ranks", 12, "--out", tmp_path / "ray", "--plot",
                  tmp_path / "k.png")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Kautz K(3, 2): 12 ranks\n")
    assert "diameter              2 hops" in proc.stdout
    assert sorted(p.name for p in (tmp_path / "ray").iterdir()) == \
        ["Connections.txt", "RelayEvents.txt", "Routes.txt", "Summary.txt"]
    assert (tmp_path / "k.png").read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.png", "ray"]


def test_cli_refuses_a_degree_that_does_not_fit_and_defaults_to_rays_degree_2():
    proc = hopsim("topology", "debruijn", "--ranks", 64, "--degree", 3, "--json")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == ("hopsim: error: debruijn: degree 3 does not fit 64 ranks; nearest sizes "
                           "27 (b=3, D=3) and 81 (b=3, D=4); degrees that fit 64 ranks: 2, 4, 8; "
                           "degree 0 (RayPlatform's rule) builds b=2, D=6\n")
    proc = hopsim("topology", "debruijn", "--ranks", 64, "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["degree"] == 2


def test_cli_seed_ray_writes_rayplatforms_random_files(tmp_path):
    proc = hopsim("topology", "random", "--ranks", 64, "--seed", "ray", "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("RayPlatform's random graph (mean degree 6): 64 ranks\n")
    golden = (Path(__file__).parent / "data" / "ray" / "random-64-2" / "Connections.txt").read_bytes()
    assert (tmp_path / "Connections.txt").read_bytes() == golden
    proc = hopsim("topology", "random", "--ranks", 64, "--seed", "rey")
    assert proc.returncode == 2 and "expected an integer or 'ray'" in proc.stderr


@pytest.mark.parametrize("args,message", [
    (["kautz", "--ranks", 4000],
     "kautz: 4000 ranks do not fit; nearest sizes 3906 (d=62, D=2) and 4032 (d=63, D=2)"),
    (["mesh", "--ranks", 16], "unknown overlay family 'mesh'"),
    (["debruijn", "--ranks", 0], "debruijn: the number of ranks must be positive (got 0)"),
    (["debruijn", "--ranks", -4], "debruijn: the number of ranks must be positive (got -4)"),
    (["torus", "--ranks", 1000], "degrees that fit 1000 ranks: 10"),
    (["random", "--ranks", 5000, "--seed", "ray"], "random (seed ray): 5000 ranks do not fit"),
    (["random", "--ranks", 48, "--seed", 3], "seed 4 gives a connected graph"),
])
def test_cli_bad_input_exits_2_with_one_line(tmp_path, args, message):
    proc = hopsim("topology", *args, "--out", tmp_path / "ray", "--plot", tmp_path / "x.png")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("hopsim: error: ")
    assert message in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_cli_unwritable_destinations_leave_nothing(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    proc = hopsim("topology", "debruijn", "--ranks", 16, "--out", blocker / "ray")
    assert proc.returncode == 2 and "is not a folder" in proc.stderr
    proc = hopsim("topology", "debruijn", "--ranks", 16, "--out", tmp_path / "ray",
                  "--plot", blocker / "x.png")
    assert proc.returncode == 2 and proc.stderr.startswith("hopsim: error: --plot")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_next_hop_takes_the_messages_origin():
    ov = topo.build_overlay("random", 64, seed="ray")
    assert ov.routes_depend_on_origin
    differs = 0
    for s in range(0, 64, 7):
        for d in range(64):
            route = ov.route(s, d)
            assert [ov.next_hop(c, d, origin=s) for c in route[:-1]] == route[1:]
            differs += any(ov.next_hop(c, d) != n for c, n in zip(route[1:-1], route[2:]))
    assert differs > 0  # a relay's own route to d is not always the rest of s's route
    assert not topo.build_overlay("debruijn", 16).routes_depend_on_origin


def test_the_summary_of_b_2_2_worked_out_by_hand():
    # B(2, 2): 4 words, 2 out-arcs each = 8 arcs (00 and 11 loop on themselves); the
    # complete graph on 4 ranks has 4 x 3 = 12. Connection lists (in-neighbours and
    # itself): 00 and 11 hold 2, 01 and 10 hold 3, a mean of 2.5.
    p = subprocess.run([sys.executable, "-m", "hopsim", "topology", "debruijn", "--ranks", "4",
                        "--degree", "2"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "de Bruijn B(2, 2): 4 ranks"
    assert lines[2] == "  arcs                  8 (self-loops included; a complete graph has 12)"
    assert lines[4].startswith("  connections per rank  min 2, mean 2.50, max 3 ")


def test_the_plot_of_b_2_2_worked_out_by_hand(tmp_path, monkeypatch):
    # B(2, 2) (routes worked out in test_the_summary_of_b_2_2_worked_out_by_hand): of the
    # 12 ordered pairs s != d, 6 are one hop and 6 two hops (50% each; the 4 routes of a
    # rank to itself are no pair). The two-hop routes 0->1, 0->3, 1->3 pass through rank
    # 2 and 2->0, 3->0, 3->2 through rank 1: relays 0, 3, 3, 0, one histogram bin per
    # count 0..3 (2, 0, 0, 2 ranks). Drawn: graph, route lengths, relay load (+ colorbar).
    from hopsim.topologies import plot as plot_mod

    figures = []

    class Kept(plot_mod.Figure):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            figures.append(self)

    monkeypatch.setattr(plot_mod, "Figure", Kept)
    topo.plot_overlay(topo.build_overlay("debruijn", 4, 2), tmp_path / "b22.png")
    (fig,) = figures
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[:3] == ["Arcs: rank -> ranks it sends to directly",
                          "Route lengths (bar labels: number of pairs)", titles[2]]
    assert titles[2].startswith("Relay load") and len(fig.axes) == 4  # the 4th: colorbar
    lengths = sorted((p.get_x() + p.get_width() / 2, p.get_height()) for p in fig.axes[1].patches)
    assert lengths == [(1.0, 50.0), (2.0, 50.0)]
    relays = [p.get_height() for p in fig.axes[2].patches]
    assert relays == [2, 0, 0, 2]
    # The complete graph relays nothing: one bar at 0, the axis 2 either side of it.
    figures.clear()
    topo.plot_overlay(topo.build_overlay("complete", 4), tmp_path / "c4.png")
    assert figures[0].axes[2].get_xlim() == (-2.0, 2.0)
