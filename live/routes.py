"""The route table hopbench relays with, written from the engine's own overlay.

hopbench has no routing code of its own: for every ordered pair (s, d) it reads the whole
route the engine computes (Overlay.route), and for every rank its round-robin reception
list (Overlay.connection_list). Routes are stored per pair, not as a next hop per
destination, since a family's routes may depend on the source (random).

Polytope, hypercube and torus choose each next hop from load counters that move with
every message forwarded, so their routes depend on the order of messages at run time;
a static table cannot reproduce that, and live runs refuse them (docs/live.md).
"""
from __future__ import annotations

from pathlib import Path

from ..errors import InputError

DYNAMIC_FAMILIES = ("polytope", "hypercube", "torus")


def build(overlay, ranks: int, degree: int | None = None, seed: int = 1):
    """The engine's overlay for a family name or a networkx graph."""
    from .. import topologies

    if not isinstance(overlay, str):
        return topologies.from_networkx(overlay, seed=seed)
    if overlay in DYNAMIC_FAMILIES:
        raise InputError(f"overlay: {overlay} routes with run-time load counters, which a live "
                         f"run cannot replay from a route table; use complete, debruijn, kautz, "
                         f"random or group")
    try:
        return topologies.build_overlay(overlay, ranks, degree or 0, seed)
    except ValueError as e:
        raise InputError(f"overlay: {e}") from None


def table(ov) -> str:
    """The table's text (format in live/hopbench/routes.c)."""
    if ov.has_load_counters:
        raise InputError(f"overlay: {ov.family} routes with run-time load counters; live runs "
                         f"cannot replay it")
    n = ov.size
    lines = [f"hopbench-routes 1 {n}"]
    for r in range(n):
        conn = ov.connection_list(r)
        lines.append(f"conn {r} {len(conn)} " + " ".join(map(str, conn)))
    for s in range(n):
        for d, route in enumerate(ov.routes_from(s)):
            lines.append(f"route {s} {d} {len(route)} " + " ".join(map(str, route)))
    return "\n".join(lines) + "\n"


def write(path: Path, overlay, ranks: int, degree: int | None = None, seed: int = 1) -> Path:
    ov = build(overlay, ranks, degree, seed)
    path = Path(path)
    path.write_text(table(ov))
    return path


def read(path: Path) -> tuple[dict[int, list[int]], dict[tuple[int, int], list[int]]]:
    """(connection lists, routes) of a table, as hopbench reads it (for tests and checks)."""
    conns, routes = {}, {}
    for line in Path(path).read_text().splitlines()[1:]:
        f = line.split()
        if f[0] == "conn":
            conns[int(f[1])] = [int(x) for x in f[3:]]
        else:
            routes[(int(f[1]), int(f[2]))] = [int(x) for x in f[4:]]
    return conns, routes
