"""The files RayPlatform writes about its routing graph, byte for byte.

Tab-separated, as RayPlatform's ConnectionGraph::writeFiles writes them (docs/overlays.md):

    Connections.txt   #Rank Count Connections: out-neighbours ascending, space-separated
    Routes.txt        #Source Destination Hops Route: all n^2 pairs, s == d is "s" at 0
                      hops; for polytope and torus the single line DYNAMIC_ROUTES
    RelayEvents.txt   #Source RelayEvents: relay events per rank (polytope and torus: one
                      load table shared by all pairs, taken source by source)
    Summary.txt       Type, vertex and arc counts, out-degree frequencies, relay events
                      per vertex, route-length frequencies; averages and standard
                      deviations by RayPlatform's own formulas (core/statistics.cpp)
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator, TextIO

import networkx as nx

from .overlays import Overlay
from .statistics import RouteStatistics, ray_average, ray_standard_deviation, route_statistics

FILES = ("Connections.txt", "Routes.txt", "RelayEvents.txt", "Summary.txt")
# RayPlatform's Routes.txt for the load-balanced families (polytope, torus).
DYNAMIC_ROUTES = "Routes are dynamically determined with real-time load-balancing."


def write_ray_files(overlay: Overlay, directory: str | os.PathLike,
                    stats: RouteStatistics | None = None) -> list[Path]:
    """Write the four files into ``directory`` (created if missing) and return their paths.

    All four are written into a staging directory first and moved in at the end, so an
    error leaves none of them behind. Routes.txt has n^2 lines: about 0.5 GB at 4096 ranks.
    """
    directory = Path(directory)
    stats = stats if stats is not None else route_statistics(overlay)
    stage = Path(tempfile.mkdtemp(prefix=".hopsim-ray-", dir=_existing_ancestor(directory)))
    try:
        for name, writer in zip(FILES, WRITERS):
            with open(stage / name, "w", encoding="ascii") as f:
                writer(f, overlay, stats)
        directory.mkdir(parents=True, exist_ok=True)
        for name in FILES:
            os.replace(stage / name, directory / name)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return [directory / name for name in FILES]


def _existing_ancestor(path: Path) -> Path:
    path = path.absolute()
    while not path.is_dir():
        path = path.parent
    return path


def _write_connections(f: TextIO, overlay: Overlay, stats: RouteStatistics) -> None:
    f.write("#Rank\tCount\tConnections\n")
    for r in range(overlay.size):
        out = overlay.out_neighbors(r)
        f.write(f"{r}\t{len(out)}\t{' '.join(map(str, out))}\n")


def _write_routes(f: TextIO, overlay: Overlay, stats: RouteStatistics) -> None:
    if overlay.has_load_counters:
        f.write(DYNAMIC_ROUTES + "\n")
        return
    f.write("#Source\tDestination\tHops\tRoute\n")
    walker = overlay.fresh()
    for s in range(overlay.size):
        f.write("".join(f"{s}\t{d}\t{len(r) - 1}\t{' '.join(map(str, r))}\n"
                        for d, r in enumerate(walker.routes_from(s))))


def _write_relay_events(f: TextIO, overlay: Overlay, stats: RouteStatistics) -> None:
    f.write("#Source\tRelayEvents\n")
    f.writelines(f"{r}\t{count}\n" for r, count in enumerate(stats.file_relays))


def _frequencies(f: TextIO, counts: dict[int, int]) -> None:
    total = sum(counts.values())
    f.write("   Frequencies:\n")
    for key, count in counts.items():
        f.write(f"        {key}    {count}    {count * 100.0 / total:g}%\n")
    f.write(f"        Total    {total}    100.00%\n")


def _write_summary(f: TextIO, overlay: Overlay, stats: RouteStatistics) -> None:
    # RayPlatform's layout, its C++ stream number formatting (6 significant digits, as %g)
    # and its own average and standard deviation (ray_average, ray_standard_deviation).
    n = stats.ranks
    f.write(f"Type: {stats.family}\n\n")
    f.write(f"NumberOfVertices: {n}\nNumberOfArcs: {stats.arcs}\n"
            f"NumberOfArcsInCompleteGraph: {n * (n - 1)}\n\n")
    f.write("NumberOfOutcomingArcsPerVertex\n")
    _frequencies(f, stats.out_degree_counts)
    f.write(f"   Average: {ray_average(stats.out_degrees):g}\n"
            f"   StandardDeviation: {ray_standard_deviation(stats.out_degrees):g}\n\n")
    f.write("NumberOfRelayEventsPerVertex\n")
    f.write(f"   Average: {ray_average(stats.file_relays):g}\n"
            f"   StandardDeviation: {ray_standard_deviation(stats.file_relays):g}\n\n")
    f.write("RouteLength\n")
    _frequencies(f, stats.route_lengths)


def _data_lines(path: str | os.PathLike, header: str) -> Iterator[list[str]]:
    with open(path, encoding="ascii") as f:
        first = f.readline().rstrip("\n")
        if first != header:
            raise ValueError(f"{path}: expected the header {header!r}, found {first!r}")
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if fields != [""]:
                yield fields


def read_connections(path: str | os.PathLike) -> nx.DiGraph:
    """Connections.txt as a DiGraph on ranks 0..n-1 (the counts are checked)."""
    G = nx.DiGraph()
    for fields in _data_lines(path, "#Rank\tCount\tConnections"):
        rank, count = int(fields[0]), int(fields[1])
        targets = [int(x) for x in fields[2].split()] if len(fields) > 2 else []
        if len(targets) != count:
            raise ValueError(f"{path}: rank {rank} lists {len(targets)} connections, count {count}")
        G.add_node(rank)
        G.add_edges_from((rank, t) for t in targets)
    return G


def iter_routes(path: str | os.PathLike) -> Iterator[tuple[int, int, list[int]]]:
    """(source, destination, route) for every line of Routes.txt, hop counts checked;
    nothing for RayPlatform's polytope and torus file (DYNAMIC_ROUTES)."""
    with open(path, encoding="ascii") as f:
        if f.readline().rstrip("\n") == DYNAMIC_ROUTES:
            return
    for fields in _data_lines(path, "#Source\tDestination\tHops\tRoute"):
        s, d, hops = int(fields[0]), int(fields[1]), int(fields[2])
        route = [int(x) for x in fields[3].split()]
        if len(route) != hops + 1 or route[0] != s or route[-1] != d:
            raise ValueError(f"{path}: the route {s} -> {d} does not match its {hops} hops")
        yield s, d, route


def read_routes(path: str | os.PathLike) -> dict[tuple[int, int], list[int]]:
    """Routes.txt as {(source, destination): route}; use :func:`iter_routes` for large n."""
    return {(s, d): route for s, d, route in iter_routes(path)}


def read_relay_events(path: str | os.PathLike) -> list[int]:
    """RelayEvents.txt as a list indexed by rank."""
    rows = [(int(f[0]), int(f[1])) for f in _data_lines(path, "#Source\tRelayEvents")]
    if [r for r, _ in rows] != list(range(len(rows))):
        raise ValueError(f"{path}: ranks are not 0..{len(rows) - 1} in order")
    return [count for _, count in rows]


def read_summary(path: str | os.PathLike) -> dict:
    """Summary.txt as a dict: type, vertices, arcs, arcs_in_complete_graph,
    out_degree_counts, out_degree_mean, out_degree_sd, relay_mean, relay_sd, route_lengths
    (the frequency tables as {value: count})."""
    keys = {"Type": "type", "NumberOfVertices": "vertices", "NumberOfArcs": "arcs",
            "NumberOfArcsInCompleteGraph": "arcs_in_complete_graph"}
    sections = {"NumberOfOutcomingArcsPerVertex": "out_degree",
                "NumberOfRelayEventsPerVertex": "relay", "RouteLength": "route_lengths"}
    summary: dict = {"out_degree_counts": {}, "route_lengths": {}}
    section = None
    with open(path, encoding="ascii") as f:
        for line in f:
            text = line.strip()
            if not text or text == "Frequencies:":
                continue
            if text in sections:
                section = sections[text]
                continue
            key, colon, value = text.partition(":")
            if colon and key in keys:
                summary[keys[key]] = value.strip() if key == "Type" else int(value)
            elif colon and key in ("Average", "StandardDeviation") and section in ("out_degree", "relay"):
                summary[f"{section}_{'mean' if key == 'Average' else 'sd'}"] = float(value)
            elif not colon and section in ("out_degree", "route_lengths"):
                first, count = text.split()[:2]
                if first != "Total":
                    table = "out_degree_counts" if section == "out_degree" else "route_lengths"
                    summary[table][int(first)] = int(count)
            else:
                raise ValueError(f"{path}: unexpected line {text!r}")
    return summary


def read_ray_files(directory: str | os.PathLike) -> dict:
    """The four files of a directory: {"connections": DiGraph, "routes": dict,
    "relay_events": list, "summary": dict}."""
    directory = Path(directory)
    return {"connections": read_connections(directory / "Connections.txt"),
            "routes": read_routes(directory / "Routes.txt"),
            "relay_events": read_relay_events(directory / "RelayEvents.txt"),
            "summary": read_summary(directory / "Summary.txt")}


# One writer per file of FILES, in order (hopsim topology stages each through hopsim.outputs).
WRITERS = (_write_connections, _write_routes, _write_relay_events, _write_summary)
