"""Overlays as the engine builds them: families, user graphs, sizes, networkx views.

Every arc and every next hop comes from hopsim._engine (simulator/overlay.cpp), the one
implementation of overlay routing; this module only converts between it and networkx.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import networkx as nx

from .. import _engine

FAMILIES = ("complete", "debruijn", "kautz", "random", "group", "polytope", "hypercube", "torus")

Overlay = _engine.Overlay
OverlayError = _engine.OverlayError  # a ValueError


# seed = "ray": RayPlatform's own random graph and routes (docs/overlays.md).
RAY_SEED = "ray"


def engine_family(family: str, seed=1) -> str:
    """The engine's name for ``family`` built with ``seed``: RayPlatform's random graph
    is "ray-random"; seed "ray" applies to the random family only."""
    if seed == RAY_SEED:
        if family != "random":
            raise OverlayError(f'{family}: seed "ray" applies to the random family only '
                               "(RayPlatform's own random graph and routes)")
        return "ray-random"
    return family


@dataclass(frozen=True)
class Shape:
    """One size of a family: ``ranks`` ranks with degree parameter ``degree`` and words
    of ``digits`` digits (1 for the families without words)."""

    ranks: int
    degree: int
    digits: int


def _shape(s) -> Shape | None:
    return Shape(s.ranks, s.degree, s.digits) if s.ranks else None


def shape(family: str, ranks: int, degree: int = 0, seed=1) -> Shape:
    """The shape :func:`build_overlay` would build, without building it.

    Raises ValueError (``hopsim._engine.OverlayError``) when the family does not fit
    ``ranks`` or an explicit ``degree`` does not fit them, with a message naming the
    nearest valid sizes and the degrees that fit.
    """
    return _shape(_engine.overlay_shape(engine_family(family, seed), ranks, degree))


def nearest_sizes(family: str, ranks: int, degree: int = 0) -> tuple[Shape | None, Shape | None]:
    """The valid sizes of ``family`` closest to ``ranks``: (largest below, smallest above),
    None where there is none, each with the parameters chosen for it.

    >>> nearest_sizes("kautz", 4000)
    (Shape(ranks=3906, degree=62, digits=2), Shape(ranks=4032, degree=63, digits=2))
    """
    below, above = _engine.nearest_sizes(family, ranks, degree)
    return _shape(below), _shape(above)


def build_overlay(family: str, ranks: int, degree: int = 0, seed=1) -> Overlay:
    """The engine's overlay of ``family`` on ``ranks`` ranks.

    ``degree`` is the family's parameter: the base b of de Bruijn B(b, D), the d of Kautz
    K(d, D), the alphabet size of polytope, the radix of torus. 0 applies RayPlatform's
    rule: for de Bruijn, Ray's default degree 2 (1024 ranks: B(2, 10)); for Kautz, the
    largest d that fits. An explicit degree that does not fit ``ranks`` raises ValueError
    (never a silent substitute). ``seed`` draws the random family's edges and its route
    ties; ``seed="ray"`` builds RayPlatform's own random graph and per-pair routes.
    """
    return _engine.make_overlay(engine_family(family, seed), ranks, degree,
                                1 if seed == RAY_SEED else seed)


def from_networkx(G: nx.Graph, seed: int = 1, family: str = "user") -> Overlay:
    r"""Route any networkx graph as an overlay: shortest paths in next-hop tables.

    Ranks are the nodes of ``G`` in sorted order (node ``k`` is rank ``k`` when the nodes
    are 0..n-1); an undirected edge is an arc each way; self-loops are kept as arcs.
    Among the neighbours one hop closer to the destination, the next hop is the one
    carrying fewer relays so far, then the lower rank, pairs being processed in an order
    shuffled by ``seed`` (docs/overlays.md). Every rank must reach every other.

    Memory: :math:`2 n^2` bytes for the table (32 MiB at 4096 ranks), as much again while
    it is built; at most 16384 ranks.
    """
    nodes = _ranked_nodes(G)
    index = {node: k for k, node in enumerate(nodes)}
    arcs = [(index[u], index[v]) for u, v in G.edges()]
    if not G.is_directed():
        arcs += [(v, u) for u, v in arcs]
    return _engine.make_table_overlay(len(nodes), arcs, seed, family)


def _ranked_nodes(G: nx.Graph) -> list:
    try:
        return sorted(G.nodes())
    except TypeError:  # labels of mixed types: keep the graph's own order
        return list(G.nodes())


def to_networkx(overlay: Overlay) -> nx.DiGraph:
    """The overlay's arcs as a DiGraph on nodes 0..n-1, self-loops included.

    Graph attributes: ``family``, ``degree``, ``digits`` and ``name`` (a label such as
    "de Bruijn B(2, 4)").
    """
    G = nx.DiGraph(family=overlay.family, degree=overlay.degree, digits=overlay.digits,
                   name=label(overlay))
    G.add_nodes_from(range(overlay.size))
    G.add_edges_from(overlay.arcs())
    return G


def label(overlay: Overlay) -> str:
    """A short human name for the overlay, with its parameters in the usual notation
    (the engine's Overlay.label)."""
    return overlay.label
