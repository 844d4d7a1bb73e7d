"""One figure per overlay: the graph (small n), its route lengths and its relay load.

Drawn with matplotlib's Agg canvas directly (no pyplot state, no display needed).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import networkx as nx
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .overlays import Overlay, to_networkx
from .statistics import RouteStatistics, route_statistics

DRAW_LIMIT = 64  # ranks: beyond this a drawing of the graph is an unreadable disc


def plot_overlay(overlay: Overlay, path: str | os.PathLike, stats: RouteStatistics | None = None,
                 draw_limit: int = DRAW_LIMIT) -> Path:
    """Save a PNG of the overlay: its drawing when it has at most ``draw_limit`` ranks
    (ranks coloured by relay load), the route-length histogram and the relay-load
    histogram. The file appears only once complete. Returns its path."""
    stats = stats if stats is not None else route_statistics(overlay)
    drawn = overlay.size <= draw_limit
    fig = Figure(figsize=(16 if drawn else 11, 5.2), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 3 if drawn else 2)
    if drawn:
        _draw_graph(axes[0], overlay, stats, fig)
    _route_lengths(axes[-2], stats)
    _relay_load(axes[-1], stats)
    fig.suptitle(f"{stats.name}: {stats.ranks} ranks, {stats.arcs} arcs, diameter {stats.diameter} hops",
                 fontsize=13)
    path = Path(path)
    fd, staged = tempfile.mkstemp(prefix=".hopsim-plot-", suffix=".png", dir=path.absolute().parent)
    os.close(fd)
    try:
        fig.savefig(staged, dpi=110, format="png")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staged, 0o666 & ~umask)  # mkstemp's 0600 would surprise next to other outputs
        os.replace(staged, path)
    finally:
        if os.path.exists(staged):
            os.unlink(staged)
    return path


def _draw_graph(ax, overlay: Overlay, stats: RouteStatistics, fig: Figure) -> None:
    G = to_networkx(overlay)
    pos = nx.circular_layout(G)
    n = overlay.size
    node_size = 300 if n <= 32 else 120
    nodes = nx.draw_networkx_nodes(G, pos, ax=ax, node_size=node_size, node_color=stats.relays,
                                   cmap="viridis", vmin=0, vmax=max(1, stats.relay_max))
    nx.draw_networkx_edges(G, pos, ax=ax, node_size=node_size, arrows=True, arrowsize=8,
                           width=0.6, alpha=0.45, edge_color="0.3")
    if n <= 32:
        nx.draw_networkx_labels(G, pos, ax=ax, font_size=7, font_color="white")
    fig.colorbar(nodes, ax=ax, shrink=0.8, label="relay events of the rank")
    ax.set_title("Arcs: rank -> ranks it sends to directly")
    ax.set_axis_off()


def _route_lengths(ax, stats: RouteStatistics) -> None:
    hops = [h for h in stats.route_lengths if h > 0]
    pairs = stats.ranks * (stats.ranks - 1)
    shares = [100.0 * stats.route_lengths[h] / pairs for h in hops]
    bars = ax.bar(hops, shares, color="tab:blue", width=0.8, label="ordered pairs (s != d)")
    if len(hops) <= 16:
        ax.bar_label(bars, labels=[f"{stats.route_lengths[h]:,}" for h in hops], fontsize=7)
    ax.axvline(stats.mean_hops, color="tab:red", linestyle="--",
               label=f"mean {stats.mean_hops:.2f} hops")
    ax.set_xlabel("route length (hops)")
    ax.set_ylabel(f"share of the {pairs:,} ordered pairs (%)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("Route lengths (bar labels: number of pairs)")
    ax.legend(loc="best")


def _relay_load(ax, stats: RouteStatistics) -> None:
    lo, hi = min(stats.relays), max(stats.relays)
    if lo == hi:  # every rank relays as much (complete, Kautz K(d, 2), ...): one bar
        ax.bar([lo], [stats.ranks], width=max(1.0, 0.02 * lo), color="tab:green",
               label=f"{stats.ranks} ranks")
        ax.set_xlim(lo - max(2.0, 0.1 * lo), hi + max(2.0, 0.1 * lo))
    else:
        ax.hist(stats.relays, bins=min(30, hi - lo + 1), range=(lo, hi + 1), color="tab:green",
                edgecolor="white", label=f"{stats.ranks} ranks")
    ax.axvline(stats.relay_mean, color="tab:red", linestyle="--",
               label=f"mean {stats.relay_mean:.1f} (SD {stats.relay_sd:.1f})")
    ax.axvline(stats.relay_max, color="black", linestyle=":", label=f"max {stats.relay_max}")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("relay events per rank (messages forwarded when every rank\n"
                  "sends one message to every other rank)")
    ax.set_ylabel("ranks")
    ax.set_title("Relay load")
    ax.legend(loc="best", framealpha=0.9)
