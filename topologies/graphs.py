r"""RayPlatform's overlay families as networkx DiGraphs (arcs from the engine).

Ranks 0..n-1 are nodes; an arc u -> v means rank u sends to rank v directly. Ranks are
words of D digits in base b, little-endian: digit p of rank i is
:math:`\lfloor i / b^p \rfloor \bmod b`. Routes on these graphs are not networkx's: use
:func:`hopsim.topologies.build_overlay` and its ``route`` / ``next_hop``.
"""
from __future__ import annotations

import networkx as nx

from .overlays import build_overlay, to_networkx


def complete_graph(ranks: int) -> nx.DiGraph:
    r"""Every rank sends to every other rank: :math:`n(n-1)` arcs, no self-connection (as
    RayPlatform lists it).

    RayPlatform's default without routing. Next hop = destination, so every route is one
    hop and no rank relays, but a round-robin receiver polls all n sources (itself
    included: the reception list is not the connection list).
    """
    return to_networkx(build_overlay("complete", ranks))


def debruijn_graph(ranks: int, degree: int = 0) -> nx.DiGraph:
    r"""The de Bruijn digraph B(b, D) on :math:`n = b^D` ranks.

    Arc :math:`i \to j` when digits 1..D-1 of i equal digits 0..D-2 of j, that is

    .. math:: j = \lfloor i / b \rfloor + x\, b^{D-1}, \qquad x = 0, \dots, b-1,

    so every rank has b out- and b in-neighbours and the b constant words carry a
    self-loop: :math:`n b` arcs. Shift routing (append the destination's digits one by
    one) reaches any rank in :math:`D - \mathrm{ov}(s, d) \le D = \log_b n` hops, where
    ov is the longest tail of s that is a head of d.

    ``degree`` is b; 0 applies Ray's default degree 2 through RayPlatform's rule (if n is
    a power of 2, b = 2; else the largest base :math:`\le 1024`, halved while
    :math:`\ge n`, with :math:`n = b^k`). For example 1024 ranks give B(2, 10), 729 give
    B(27, 2); with degree 32, 1024 ranks give B(32, 2). A degree that does not fit n is
    an error.

    >>> G = debruijn_graph(16, degree=2)
    >>> sorted(G.successors(0))
    [0, 8]
    """
    return to_networkx(build_overlay("debruijn", ranks, degree))


def kautz_graph(ranks: int, degree: int = 0) -> nx.DiGraph:
    r"""The Kautz digraph K(d, D) on :math:`n = (d+1)\, d^{D-1}` ranks.

    Vertices are the words of D digits in base d+1 with no two equal adjacent digits;
    rank r is the r-th such word in integer order. Arcs shift a word by one digit as in
    de Bruijn (the new digit differs from its neighbour), so every rank has d out- and d
    in-neighbours, no self-loop, and diameter D. Kautz graphs are the largest known
    digraphs of degree d and diameter D for almost all (d, D), close to the directed
    Moore bound :math:`(d^{D+1} - 1)/(d - 1)`: K(63, 2) reaches any of 4032 ranks in two
    hops with 63 connections.

    ``degree`` is d; 0 picks the largest d in 2..1024 (D in 2..9) that fits, as
    RayPlatform always does (it ignores a requested degree; hopsim honours it).
    """
    return to_networkx(build_overlay("kautz", ranks, degree))


def random_graph(ranks: int, seed=1) -> nx.DiGraph:
    r"""A uniform random graph with :math:`\lfloor n \lfloor \log_2 n \rfloor / 2 \rfloor`
    undirected edges drawn from all :math:`n(n-1)/2` pairs by ``seed``, as arcs both ways.

    The mean degree :math:`\lfloor \log_2 n \rfloor` is about 1.44 times the connectivity
    threshold :math:`\ln n`, so most seeds give a connected graph; a seed that does not
    is an error naming one that does. Routes are shortest paths stored as next-hop tables.
    ``seed="ray"`` gives RayPlatform's own graph (its fixed srand seeds) and routes.
    """
    return to_networkx(build_overlay("random", ranks, seed=seed))


def group_graph(ranks: int) -> nx.DiGraph:
    r"""Groups of 8 consecutive ranks led by their lowest rank :math:`r - (r \bmod 8)`.

    All-to-all inside a group (self-loops included), and leader <-> leader. Routes are
    s -> leader(s) -> leader(d) -> d, at most 3 hops; the leaders relay almost
    everything.
    """
    return to_networkx(build_overlay("group", ranks))


def polytope_graph(ranks: int, degree: int = 0) -> nx.DiGraph:
    r"""The Hamming graph H(L, b) on :math:`n = b^L` ranks: arcs join words that differ in
    exactly one digit, so the degree is :math:`(b - 1) L` and the diameter L.

    The next hop fixes one differing digit, the one whose per-rank counter
    load[p][destination digit p] is lowest (ties: lowest p). ``degree`` is the alphabet
    size b; 0 means 2, the hypercube :math:`Q_L`.
    """
    return to_networkx(build_overlay("polytope", ranks, degree))


def hypercube_graph(ranks: int) -> nx.DiGraph:
    r"""The hypercube :math:`Q_L` on :math:`n = 2^L` ranks: :func:`polytope_graph` with b = 2."""
    return polytope_graph(ranks, 2)


def torus_graph(ranks: int, degree: int = 0) -> nx.DiGraph:
    r"""The k-ary D-cube on :math:`n = r^D` ranks: arcs join words that differ by
    :math:`\pm 1 \bmod r` in one digit, degree 2D (D when r = 2, where -1 and +1 meet).

    The next hop takes one step along a shortest direction, the least-loaded candidate by
    per-rank counters, positions ascending, the -1 step before the +1 step. The diameter
    is :math:`D \lfloor r/2 \rfloor`. ``degree`` is the radix r; 0 means 2.
    """
    return to_networkx(build_overlay("torus", ranks, degree))


def overlay_graph(family: str, ranks: int, degree: int = 0, seed: int = 1) -> nx.DiGraph:
    """Any family by name (``complete``, ``debruijn``, ``kautz``, ``random``, ``group``,
    ``polytope``, ``hypercube``, ``torus``) as a DiGraph."""
    return to_networkx(build_overlay(family, ranks, degree, seed))
