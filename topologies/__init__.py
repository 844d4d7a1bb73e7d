"""hopsim.topologies: RayPlatform's software-routed overlays seen from Python.

Ranks that may talk directly only to a few neighbours, every other message relayed rank
by rank (docs/overlays.md). The arcs and the routes come from the engine
(hopsim._engine, the same code the simulator routes with); this package turns them into
networkx graphs, statistics, RayPlatform's files and figures.

    >>> from hopsim import topologies as topo
    >>> ov = topo.build_overlay("debruijn", 16, degree=2)
    >>> ov.route(0, 1)
    [0, 8, 4, 2, 1]
    >>> st = topo.route_statistics(ov)
    >>> st.route_lengths, st.relay_mean
    ({0: 16, 1: 30, 2: 54, 3: 82, 4: 74}, 27.5)
    >>> topo.nearest_sizes("kautz", 4000)
    (Shape(ranks=3906, degree=62, digits=2), Shape(ranks=4032, degree=63, digits=2))

Families: complete, debruijn, kautz, random, group, polytope (alias hypercube), torus;
any networkx graph through :func:`from_networkx`. ``build_overlay("random", n, seed="ray")``
is RayPlatform's own random graph with its per-pair routes.
"""
from .graphs import (complete_graph, debruijn_graph, group_graph, hypercube_graph, kautz_graph,
                     overlay_graph, polytope_graph, random_graph, torus_graph)
from .overlays import (FAMILIES, RAY_SEED, Overlay, OverlayError, Shape, build_overlay,
                       from_networkx, label, nearest_sizes, shape, to_networkx)
from .plot import plot_overlay
from .rayfiles import (iter_routes, read_connections, read_ray_files, read_relay_events,
                       read_routes, read_summary, write_ray_files)
from .statistics import RouteStatistics, route_statistics

__all__ = [
    "FAMILIES", "RAY_SEED", "Overlay", "OverlayError", "Shape", "RouteStatistics",
    "build_overlay", "from_networkx", "to_networkx", "shape", "nearest_sizes", "label",
    "route_statistics",
    "complete_graph", "debruijn_graph", "kautz_graph", "random_graph", "group_graph",
    "polytope_graph", "hypercube_graph", "torus_graph", "overlay_graph",
    "write_ray_files", "read_ray_files", "read_connections", "read_routes", "iter_routes",
    "read_relay_events", "read_summary", "plot_overlay",
]
