r"""Route statistics over all :math:`n^2` ordered pairs of ranks (docs/overlays.md).

For every ordered pair (s, d) the route s, ..., d is followed; s == d counts as a route
of 0 hops. Every rank strictly inside a route gains one *relay event*: the relay load a
rank would carry if every rank sent one message to every rank. The engine computes the
routes (on a fresh copy, so polytope and torus start from zero counters, pairs in order
s ascending then d ascending; per-rank counters as each MPI rank keeps them at run time,
and also one shared table as RayPlatform's files count them); this module summarises them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .overlays import Overlay, label


@dataclass(frozen=True)
class RouteStatistics:
    """What :func:`route_statistics` measures. Per-rank lists are indexed by rank."""

    family: str
    ranks: int
    degree: int
    digits: int
    arcs: int                      # self-loops included, as RayPlatform counts them
    diameter: int                  # hops
    mean_hops: float               # over the n(n-1) pairs with s != d
    route_lengths: dict[int, int]  # hops -> ordered pairs (s == d included, at 0)
    relays: list[int]              # relay events per rank
    out_degrees: list[int]         # out-neighbours per rank (self-loop included)
    connections: list[int]         # round-robin reception list: in-neighbours + itself
    name: str = field(default="")
    # Relay events as RayPlatform's RelayEvents.txt counts them: one load table shared by
    # all ranks for polytope and torus; the same as relays for the other families.
    file_relays: list[int] = field(default_factory=list)

    @property
    def relay_mean(self) -> float:
        return sum(self.relays) / self.ranks

    @property
    def relay_sd(self) -> float:
        """Population standard deviation of the relay events per rank."""
        m = self.relay_mean
        return math.sqrt(sum((r - m) ** 2 for r in self.relays) / self.ranks)

    @property
    def relay_ray_sd(self) -> float:
        """RayPlatform's figure for the same values (:func:`ray_standard_deviation`)."""
        return ray_standard_deviation(self.relays)

    @property
    def relay_max(self) -> int:
        return max(self.relays)

    @property
    def out_degree_counts(self) -> dict[int, int]:
        """out-degree -> number of ranks."""
        counts: dict[int, int] = {}
        for k in self.out_degrees:
            counts[k] = counts.get(k, 0) + 1
        return dict(sorted(counts.items()))

    def to_json(self) -> dict:
        """The ``hopsim topology --json`` object."""
        return {
            "family": self.family,
            "ranks": self.ranks,
            "degree": self.degree,
            "diameter": self.diameter,
            "arcs": self.arcs,
            "mean_hops": self.mean_hops,
            "route_lengths": {str(h): c for h, c in self.route_lengths.items()},
            "relays": {"mean": self.relay_mean, "sd": self.relay_sd, "ray_sd": self.relay_ray_sd,
                       "max": self.relay_max},
        }


def _int32(x: int) -> int:
    """x wrapped to a C int, as RayPlatform's int arithmetic wraps on x86-64."""
    return (x + 2**31) % 2**32 - 2**31


def ray_average(values: list[int]) -> float:
    """RayPlatform's getAverage (core/statistics.cpp): an int sum, then divided."""
    total = 0
    for v in values:
        total = _int32(total + v)
    return total / len(values) if values else float(total)


def ray_standard_deviation(values: list[int]) -> float:
    r"""RayPlatform's getStandardDeviation (core/statistics.cpp), the figure its
    Summary.txt prints: each deviation from the mean is truncated to an integer before it
    is squared,

    .. math:: \sqrt{\tfrac{1}{n} \sum_v \operatorname{trunc}(x_v - \bar x)^2},

    in C int arithmetic (squares wrap to 32 bits, the sum to 64). It equals the population
    SD when the mean is an integer and the squares fit an int.
    """
    mean = ray_average(values)
    total = 0
    for v in values:
        diff = _int32(int(v - mean))
        total = (total + _int32(diff * diff)) % 2**64
    return math.sqrt(total / len(values)) if values else math.sqrt(total)


def route_statistics(overlay: Overlay, progress=None) -> RouteStatistics:
    r"""Diameter, mean hops, hop histogram, relay events and degrees of an overlay.

    With :math:`h(s, d)` the hops from s to d and :math:`R_v` the relay events of rank v,

    .. math:: \bar h = \frac{1}{n(n-1)} \sum_{s \ne d} h(s, d), \qquad
              \sum_v R_v = \sum_{s \ne d} \bigl(h(s, d) - 1\bigr),

    so the mean relay load is :math:`(n - 1)(\bar h - 1)`. Takes the engine's overlay
    (:func:`build_overlay` for a family, :func:`from_networkx` for a graph of your own).
    Seconds at 4096 ranks. progress, if given, is called with the fraction of the
    routes walked (0 to 1; at most every 0.2 s, and 1 at the end).
    """
    if not isinstance(overlay, Overlay):
        raise TypeError("route_statistics takes an overlay: build_overlay(family, ranks) for a "
                        "family, from_networkx(G) for a graph of your own")
    shared = overlay.has_load_counters  # a second walk, with RayPlatform's one table
    half = (lambda f: progress(f / 2)) if progress and shared else progress
    st = overlay.statistics(progress=half)
    n = overlay.size
    file_relays = (overlay.statistics(shared_counters=True,
                                      progress=progress and (lambda f: progress(0.5 + f / 2)))["relays"]
                   if shared else st["relays"])
    return RouteStatistics(
        family=overlay.family, ranks=n, degree=overlay.degree, digits=overlay.digits,
        arcs=st["arcs"], diameter=st["diameter"], mean_hops=st["mean_hops"],
        route_lengths={h: c for h, c in enumerate(st["route_lengths"]) if c},
        relays=list(st["relays"]),
        out_degrees=[len(overlay.out_neighbors(r)) for r in range(n)],
        connections=[len(overlay.connection_list(r)) for r in range(n)],
        name=label(overlay), file_relays=list(file_relays))
