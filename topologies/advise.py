r"""The overlay advisor: which routing overlay should N ranks use on this platform?

    hopsim advise --platform qdr-ib --ranks 4096 [--ranks-per-node 16] [--reception round-robin]
                  [--max-connections C] [--exchanges 10] [--json]

Every overlay family and degree that the engine can build on exactly N ranks is a
candidate (complete, de Bruijn B(b, D) for each b with b^D = N, Kautz K(d, D) with
d^D + d^(D-1) = N, random, group, polytope, hypercube and torus at each alphabet size);
a family that fits no size N contributes the valid sizes nearest N instead, marked so.
Candidates whose round-robin list (in-neighbours and the rank itself) exceeds
``--max-connections`` on some rank are dropped before anything is simulated.

Each candidate runs Ray's network test on the platform (4000-byte request, empty reply,
``exchanges`` round trips per rank, as hopsim's scenarios do), placed ranks_per_node per
node, with the nodes scaled to what N needs. The recommendation is the candidate with the
lowest mean round trip among those of exactly N ranks; a candidate within the run's noise
(``TIE`` relative) of it and with fewer connections per rank is preferred, since a
connection costs memory and buffers on every rank. Why a sparse overlay can win although
its routes are longer: with round-robin reception a rank probes one entry of its list per
pass, so each hop waits about half a cycle of that list, and the round trip is roughly

.. math:: t \approx \bar h \,(L + c\,p/2),

with :math:`\bar h` the mean hops, :math:`L` the latency, :math:`c` the connections per
rank and :math:`p` the pass cost (docs/model.md, "Reception policies").
"""
from __future__ import annotations

import math
import multiprocessing
import signal
from dataclasses import asdict, dataclass

from .. import _engine
from ..errors import InputError
from .overlays import FAMILIES, Shape, nearest_sizes

# Two candidates whose mean round trips differ by less than this fraction are a tie; the
# one with fewer connections per rank is then preferred.
TIE = 0.02
# Ray's network test (docs/workloads.md): 4000-byte request, empty reply.
REQUEST_BYTES, REPLY_BYTES = 4000, 0


@dataclass(frozen=True)
class Candidate:
    family: str
    ranks: int
    degree: int       # the family's parameter as built (0 where it has none)
    label: str
    fit: str          # "exact", or "nearest below" / "nearest above" when N does not fit


def _shapes(family: str, ranks: int) -> list[Shape]:
    """Every distinct shape of ``family`` on exactly ``ranks`` ranks, from the engine.

    Degrees beyond sqrt(ranks) + 1 make words of one digit (the complete graph again), so
    only 0 (the family's own choice) and 2..isqrt(ranks)+1 are asked."""
    seen: dict[tuple[int, int], Shape] = {}
    for degree in (0, *range(2, math.isqrt(ranks) + 2)):
        try:
            s = _engine.overlay_shape(family, ranks, degree)
        except ValueError:
            continue
        if s.ranks == ranks:
            seen.setdefault((s.degree, s.digits), Shape(s.ranks, s.degree, s.digits))
    return list(seen.values())


def candidates(ranks: int) -> list[Candidate]:
    """The overlays to try for ``ranks`` ranks (see the module's docstring)."""
    out: list[Candidate] = []
    for family in FAMILIES:
        shapes = _shapes(family, ranks)
        fit = "exact"
        if not shapes:
            below, above = nearest_sizes(family, ranks)
            shapes = [s for s in (below, above) if s is not None]
        for s in shapes:
            if s.ranks != ranks:
                fit = "nearest below" if s.ranks < ranks else "nearest above"
            label = _engine.overlay_label(family, s.degree, s.digits)
            # hypercube with an alphabet above 2 is the polytope of that alphabet: the
            # engine's label names the overlay built, so one run per label.
            if all(c.label != label or c.ranks != s.ranks for c in out):
                out.append(Candidate(family, s.ranks, s.degree if family != "complete" else 0,
                                     label, fit))
    return out


def _evaluate(platform, cand: Candidate, ranks_per_node: int, reception: str, exchanges: int,
              transport: str, seed: int) -> dict:
    from ..api import simulate

    nodes = -(-cand.ranks // ranks_per_node)
    plat = platform.replace(nodes=max(platform.nodes, nodes))
    r = simulate(plat, "roundtrip", ranks=cand.ranks, ranks_per_node=ranks_per_node,
                 seed=seed, overlay=cand.family,
                 degree=cand.degree, request_bytes=REQUEST_BYTES, reply_bytes=REPLY_BYTES,
                 exchanges=exchanges, reception=reception, transport=transport).results
    return {**asdict(cand), "nodes": plat.nodes,
            "mean_us": r["rtt_us"]["mean"], "p99_us": r["rtt_us"]["p99"],
            "ray_average_us": r["ray_average_for_all_ranks_us"],
            "ray_sd_us": r["ray_standard_deviation_us"],
            "hops": r["hops"]["mean"], "relays_mean": r["relays"]["mean"],
            "relays_sd": r["relays"]["sd"], "relays_max": r["relays"]["max"],
            "connections_mean": r["connections"]["mean"],
            "connections_max": int(r["connections"]["max"])}


def recommend(rows: list[dict], ranks: int) -> dict | None:
    """The fastest exact-size candidate, or among those within TIE of it the one with the
    fewest connections per rank (then the faster)."""
    exact = [r for r in rows if r["ranks"] == ranks]
    if not exact:
        return None
    best = min(r["mean_us"] for r in exact)
    close = [r for r in exact if r["mean_us"] <= best * (1 + TIE)]
    return min(close, key=lambda r: (r["connections_mean"], r["mean_us"], r["label"]))


def advise(platform, ranks: int, ranks_per_node: int = 1, reception: str | None = None,
           max_connections: int | None = None, exchanges: int = 10,
           transport: str | None = None, seed: int = 1, jobs: int = 1) -> dict:
    """Simulate the candidates and recommend one: {"recommendation", "candidates",
    "settings"}. Candidates are ordered by mean round trip."""
    from .. import platforms

    plat = platforms.load(platform)
    reception = reception or plat.reception
    # The queue transport is validated within a point of fair sharing on the emulated
    # cluster and is 10-2000x faster under contention (docs/model.md); star only.
    transport = transport or ("queue" if plat.topology == "star" else plat.transport)
    dropped: list[dict] = []

    def keep(c: Candidate) -> bool:
        if c.ranks % ranks_per_node:
            dropped.append({**asdict(c), "reason": f"{c.ranks} ranks do not fill nodes of "
                                                   f"{ranks_per_node}"})
            return False
        # Every rank of the complete graph keeps every rank: known without a run. The
        # other families' counts come from their runs (below).
        if max_connections is not None and c.family == "complete" and c.ranks > max_connections:
            dropped.append({**asdict(c), "reason": f"{c.ranks} connections per rank, more than "
                                                   f"{max_connections}"})
            return False
        return True

    cands = [c for c in candidates(ranks) if keep(c)]
    if not cands:
        raise InputError(f"no overlay family fits {ranks} ranks")
    global _JOBS
    _JOBS = [(plat, c, ranks_per_node, reception, exchanges, transport, seed) for c in cands]
    if jobs > 1 and len(_JOBS) > 1:
        # Forked workers inherit the jobs (a Platform does not pickle); they ignore Ctrl-C,
        # which the parent turns into terminating them, so nothing is left behind.
        pool = multiprocessing.get_context("fork").Pool(min(jobs, len(_JOBS)), _ignore_sigint)
        try:
            rows = pool.map(_evaluate_job, range(len(_JOBS)), chunksize=1)
        finally:
            pool.terminate()
            pool.join()
    else:
        rows = [_evaluate_job(i) for i in range(len(_JOBS))]
    if max_connections is not None:
        dropped += [{k: r[k] for k in ("family", "ranks", "degree", "label", "fit")} |
                    {"reason": f"up to {r['connections_max']} connections per rank, more than "
                               f"{max_connections}"}
                    for r in rows if r["connections_max"] > max_connections]
        rows = [r for r in rows if r["connections_max"] <= max_connections]
    rows.sort(key=lambda r: (r["mean_us"], r["label"], r["ranks"]))
    rec = recommend(rows, ranks)
    if rec is None:
        raise InputError(f"no overlay of exactly {ranks} ranks keeps at most {max_connections} "
                         f"connections per rank; nearest sizes: "
                         + ", ".join(f"{r['label']} ({r['ranks']} ranks)" for r in rows[:5]))
    return {"recommendation": rec, "candidates": rows,
            "dropped": dropped,
            "settings": {"platform": plat.name, "ranks": ranks, "ranks_per_node": ranks_per_node,
                         "reception": reception, "transport": transport, "exchanges": exchanges,
                         "seed": seed, "request_bytes": REQUEST_BYTES, "reply_bytes": REPLY_BYTES,
                         "max_connections": max_connections, "tie": TIE}}


_JOBS: list[tuple] = []


def _evaluate_job(i: int) -> dict:
    return _evaluate(*_JOBS[i])


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def table(advice: dict) -> str:
    """The candidates as a text table, the recommendation marked and explained."""
    s = advice["settings"]
    head = (f"{'':2}{'overlay':<28} {'ranks':>6} {'mean_us':>9} {'p99_us':>9} {'hops':>6} "
            f"{'conn':>7} {'relay_sd':>9} {'relay_max':>9}  fit")
    lines = [f"overlays for {s['ranks']} ranks on {s['platform']}, {s['ranks_per_node']} per node, "
             f"{s['reception']} reception, Ray's network test ({s['exchanges']} round trips per "
             f"rank, {s['transport']} transport)", head]
    rec = advice["recommendation"]
    for r in advice["candidates"]:
        mark = "* " if r is rec or r == rec else "  "
        lines.append(f"{mark}{r['label']:<28} {r['ranks']:>6} {r['mean_us']:>9.1f} {r['p99_us']:>9.1f} "
                     f"{r['hops']:>6.2f} {r['connections_mean']:>7.1f} {r['relays_sd']:>9.1f} "
                     f"{r['relays_max']:>9}  {r['fit']}")
    for d in advice["dropped"]:
        lines.append(f"  {d['label']:<28} {d['ranks']:>6}  not run: {d['reason']}")
    fastest = min((r for r in advice["candidates"] if r["ranks"] == s["ranks"]),
                  key=lambda r: r["mean_us"])
    why = ("the lowest mean round trip" if fastest == rec else
           f"within {100 * s['tie']:.0f}% of the fastest ({fastest['label']}, "
           f"{fastest['mean_us']:.1f} us) with fewer connections per rank")
    lines.append(f"recommended: {rec['label']}: {rec['mean_us']:.1f} us mean, {rec['hops']:.2f} hops, "
                 f"{rec['connections_mean']:.1f} connections per rank ({why})")
    return "\n".join(lines) + "\n"
