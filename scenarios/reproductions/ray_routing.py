"""ray-routing: Ray's network test (2011-2012) with and without RayPlatform's routing.

The QDR InfiniBand cluster (preset qdr-ib) at 1024 ranks, 64 nodes x 16, round-robin
reception: complete graph (routing off) against de Bruijn B(2, 10) (Ray's default
degree 2), Kautz (the nearest size below 1024, K(31, 2) = 992 ranks: no Kautz graph has
1024 vertices) and RayPlatform's own random graph; 512 ranks on that random graph with
and without routing; the QLogic cluster (qlogic-ib) without routing at 36, 120 and 1008
ranks, both reception policies. Ray's statistics (AverageForAllRanks, StandardDeviation,
the ranks' integer means) are the engine's (simulator/statistics.cpp); the relay load
per rank over all ordered pairs is the engine's route statistics
(hopsim.topologies.route_statistics).
"""
from __future__ import annotations

import statistics

from ...platforms import derive
from ._ray_network_test import Case, error_percent, per_hop_us, run_cases

NAME = "ray-routing"
TITLE = ("Ray's network test 2011-2012: complete vs de Bruijn vs Kautz vs random routing on "
         "the QDR cluster (1024 ranks), and the QLogic cluster at 36, 120 and 1008 ranks")

# Ray's network test runs 1000 round trips per rank by default (NetworkTest.cpp), as the
# published runs did; --quick runs fewer on fewer ranks (same code path).
EXCHANGES, QUICK_EXCHANGES = 1000, 20
QDR_RANKS, QUICK_QDR_RANKS = 1024, 64          # 64 nodes x 16 (--quick: 4 x 16)
SMALL_RANKS, QUICK_SMALL_RANKS = 512, 32       # the random overlay with and without routing
QLOGIC_RANKS, QUICK_QLOGIC_RANKS = (36, 120, 1008), (36, 120, 48)
QDR_PER_NODE, QLOGIC_PER_NODE = 16, 12
RECEPTIONS = ("any-source", "round-robin")

# The published figures (the presets qdr-ib and qlogic-ib in docs/platforms.md): the
# averages are those the presets were derived from (hopsim.platforms.derive); Ray's
# StandardDeviation of the QDR run (35.2018 us) is the one figure they do not use.
QDR_PUBLISHED_AVERAGE = derive.QDR_1024.value_us         # 1081.61 us, complete, round-robin
QDR_PUBLISHED_SD = 35.2018
QLOGIC_PUBLISHED = derive.QLOGIC                         # (ranks, reception) -> mean us
# Which published figure a preset was fitted to (the others are predictions).
FITTED = {("qdr-ib", QDR_RANKS, "round-robin"): "fitted: host.pass_us",
          ("qlogic-ib", 36, "any-source"): "fitted: network.latency_us",
          ("qlogic-ib", 36, "round-robin"): "fitted: host.pass_us"}

OVERLAYS = (  # (label, overlay family, seed); "" = routing off
    ("complete (routing off)", "complete", None),
    ("de Bruijn, degree 2 (Ray's default)", "debruijn", None),
    ("Kautz (nearest size below)", "kautz", None),
    ("random (RayPlatform's graph)", "random", "ray"),
)


def kautz_ranks(ranks: int) -> int:
    """ranks if a Kautz graph has that many vertices, else the nearest size below (the
    engine's size rule, hopsim.topologies.nearest_sizes)."""
    from ...topologies import OverlayError, nearest_sizes, shape
    try:
        return shape("kautz", ranks).ranks
    except OverlayError:
        below, above = nearest_sizes("kautz", ranks)
        return (below or above).ranks


def cases(study, qdr, qlogic) -> tuple[list[Case], list[Case], list[Case]]:
    """The QDR overlay cases, the 512-rank pair and the QLogic grid, in that order."""
    ex = QUICK_EXCHANGES if study.quick else EXCHANGES
    n = QUICK_QDR_RANKS if study.quick else QDR_RANKS
    small = QUICK_SMALL_RANKS if study.quick else SMALL_RANKS
    seed = study.seed
    qdr_cases = []
    for label, family, ov_seed in OVERLAYS:
        ranks = kautz_ranks(n) if family == "kautz" else n
        qdr_cases.append(Case(qdr, ranks, QDR_PER_NODE, family, "round-robin", ex,
                              seed=ov_seed or seed, per_rank=True, tags={"label": label}))
    pair = [Case(qdr, small, QDR_PER_NODE, family, "round-robin", ex, seed=ov_seed or seed,
                 per_rank=True, tags={"label": label})
            for label, family, ov_seed in (OVERLAYS[0], OVERLAYS[3])]
    ql = [Case(qlogic, ranks, QLOGIC_PER_NODE, "", rec, ex, seed=seed,
               tags={"label": "no routing"})
          for ranks in (QUICK_QLOGIC_RANKS if study.quick else QLOGIC_RANKS)
          for rec in RECEPTIONS]
    return qdr_cases, pair, ql


def flow_checks(ql: list[Case]) -> list[Case]:
    """The published QLogic runs again on SimGrid's fair sharing (the presets' transport,
    the one their figures were fitted with): small enough to afford, and they show what
    the fast transport changes where a figure exists."""
    from dataclasses import replace
    return [replace(c, transport="flow") for c in ql if (c.ranks, c.reception) in QLOGIC_PUBLISHED]


def run(study) -> None:
    qdr, qlogic = study.platform("qdr-ib"), study.platform("qlogic-ib")
    qdr_cases, pair, ql = cases(study, qdr, qlogic)
    ex = qdr_cases[0].exchanges
    # The most expensive runs first, so that two workers finish together.
    order = [1, 0, 3, 2]
    flows = flow_checks(ql)
    runs = run_cases(study, [qdr_cases[i] for i in order] + ql + pair + flows,
                     "ray-routing runs")
    qdr_runs = [None] * len(order)
    for i, r in zip(order, runs):
        qdr_runs[i] = r
    at = len(order)
    ql_runs, pair_runs = runs[at:at + len(ql)], runs[at + len(ql):at + len(ql) + len(pair)]
    flow = {(c.ranks, c.reception): r["results"] for c, r in zip(flows, runs[-len(flows):])}
    routes = [_route_stats(c) for c in qdr_cases]

    study.text(
        "Ray's network test (RayPlatform's `NetworkTest.cpp`, docs/workloads.md): every "
        "rank, in its loop of passes, sends a 4000-byte request to a destination drawn "
        "uniformly (itself included), waits for the empty reply, and repeats "
        f"{ex} times; each rank keeps whole-microsecond round trips, reports the integer "
        "mean of those up to 4096 us, and rank 0 prints `AverageForAllRanks` and "
        "`StandardDeviation` over those means (each deviation truncated to an integer "
        "before squaring, RayPlatform's `statistics.cpp`). Those two figures below are the "
        "engine's own (`simulator/statistics.cpp`), not recomputed here. With routing on, a "
        "message to a rank that is not a direct neighbour follows the overlay's route and "
        "each relay costs the relay rank one pass of its loop (docs/overlays.md). "
        f"Transport: `queue` (per-link FIFO; docs/validation.md, \"Which transport\"). "
        f"Seed {study.seed} draws the destinations (RayPlatform's random graph takes no "
        "seed: its fixed draws, and destinations from seed 1, as the engine defines).")

    _published_table(study, qdr_cases[0], qdr_runs[0], ql, ql_runs, flow)
    _qdr_table(study, qdr_cases, qdr_runs, routes, pair, pair_runs)
    _qlogic_table(study, ql, ql_runs)
    study.figure("relay-load", _relay_figure(qdr_cases, qdr_runs, routes),
                 "Per rank: Ray's integer mean round trip (the engine's per-rank figure) "
                 "against the relay events the rank carries when every rank sends one "
                 "message to every rank (the engine's route statistics), and the "
                 "distribution of those relay events, for each routed overlay of the QDR "
                 "runs")
    _explain(study, qdr_cases, qdr_runs, routes, pair_runs, ql, ql_runs, flow)
    for c in qdr_cases[:2]:
        if c.argv():
            study.command(c.argv())
    study.command(["hopsim", "topology", "debruijn", "--ranks", str(qdr_cases[1].ranks),
                   "--out", "ray-files/"])
    if not study.quick:
        big = next(c for c in ql if c.ranks == QLOGIC_RANKS[-1] and c.reception == "round-robin")
        study.command(big.argv())


def _route_stats(case: Case):
    """All-pairs route statistics of the overlay the case ran (None: routing off)."""
    from ...topologies import build_overlay, route_statistics
    if case.overlay in ("", "complete"):
        return None
    seed = case.seed if case.seed == "ray" else 1
    return route_statistics(build_overlay(case.overlay, case.ranks, degree=case.degree,
                                          seed=seed))


def _label(case: Case, run: dict) -> str:
    built = run["results"].get("overlay")
    return built["label"] if built else "no routing"


def _published_table(study, qdr_case, qdr_run, ql, ql_runs, flow) -> None:
    rows = []
    res = qdr_run["results"]
    if qdr_case.ranks == QDR_RANKS:
        rows.append(["qdr-ib", qdr_case.ranks, "round-robin", _label(qdr_case, qdr_run),
                     qdr_case.exchanges, FITTED[("qdr-ib", QDR_RANKS, "round-robin")],
                     QDR_PUBLISHED_AVERAGE, res["ray_average_for_all_ranks_us"],
                     error_percent(res["ray_average_for_all_ranks_us"], QDR_PUBLISHED_AVERAGE),
                     None, None, QDR_PUBLISHED_SD, res["ray_standard_deviation_us"],
                     error_percent(res["ray_standard_deviation_us"], QDR_PUBLISHED_SD),
                     res["rtt_us"]["mean"]])
    for c, r in zip(ql, ql_runs):
        pub = QLOGIC_PUBLISHED.get((c.ranks, c.reception))
        if pub is None:
            continue
        res = r["results"]
        fl = flow[(c.ranks, c.reception)]["ray_average_for_all_ranks_us"]
        rows.append(["qlogic-ib", c.ranks, c.reception, "no routing", c.exchanges,
                     FITTED.get(("qlogic-ib", c.ranks, c.reception), "prediction"),
                     pub, res["ray_average_for_all_ranks_us"],
                     error_percent(res["ray_average_for_all_ranks_us"], pub),
                     fl, error_percent(fl, pub), None, res["ray_standard_deviation_us"], None, res["rtt_us"]["mean"]])
    study.table("published", [
        "platform", "ranks", "reception", "overlay", "round trips per rank", "role",
        "published AverageForAllRanks us", "hopsim AverageForAllRanks us", "average error %",
        "hopsim on flow AverageForAllRanks us", "flow error %",
        "published StandardDeviation us", "hopsim StandardDeviation us", "SD error %",
        "hopsim plain mean us"], rows,
        "Every published figure of Ray's network test beside hopsim's (Ray's statistics as "
        "the engine computes them, on the queue transport; the QLogic runs also on the "
        "presets' flow transport, which the 1024-rank run cannot afford; the plain mean of "
        "all round trips for reference). 'fitted' rows are the figures the preset was "
        "calibrated on; the rest are predictions")


def _qdr_table(study, qdr_cases, qdr_runs, routes, pair, pair_runs) -> None:
    rows = []
    # Each group against its own complete graph (Kautz's 992 ranks against 1024's).
    for group in (list(zip(qdr_cases, qdr_runs, routes)),
                  [(c, r, None) for c, r in zip(pair, pair_runs)]):
        base = next(r["results"]["ray_average_for_all_ranks_us"] for c, r, _ in group
                    if c.overlay == "complete")
        for c, r, st in group:
            res = r["results"]
            means = r["ray_mean_us"]
            rel = res["relays"]
            rows.append([
                c.tags["label"], _label(c, r), c.ranks, c.exchanges,
                res["ray_average_for_all_ranks_us"], res["ray_standard_deviation_us"],
                min(means), max(means), res["rtt_us"]["p99"], res["hops"]["mean"],
                res["connections"]["mean"], per_hop_us(res), rel["mean"], rel["sd"],
                rel["max"], st.relay_mean if st else None, st.relay_ray_sd if st else None,
                min(st.relays) if st else None, st.relay_max if st else None,
                base / res["ray_average_for_all_ranks_us"]])
    study.table("qdr-overlays", [
        "overlay", "built", "ranks", "round trips per rank", "AverageForAllRanks us",
        "StandardDeviation us", "per-rank mean min us", "per-rank mean max us", "p99 us",
        "mean hops", "connections per rank", "us per hop", "relays per rank (run) mean",
        "relays per rank (run) SD", "relays per rank (run) max", "all-pairs relays mean",
        "all-pairs relays SD (Ray's)", "all-pairs relays min", "all-pairs relays max",
        "speed-up over complete"], rows,
        "QDR cluster (qdr-ib), 16 ranks per node, round-robin reception: Ray's statistics, "
        "the spread of the ranks' integer means, hops, connections (the round-robin list: "
        "in-neighbours and the rank itself), the relay events the run made and those of "
        "all ordered pairs (RayPlatform's RelayEvents.txt / Summary.txt)")


def _qlogic_table(study, ql, ql_runs) -> None:
    rows = []
    for c, r in zip(ql, ql_runs):
        res = r["results"]
        pub = QLOGIC_PUBLISHED.get((c.ranks, c.reception))
        rows.append([c.ranks, -(-c.ranks // c.per_node),
                     c.reception, c.exchanges, pub, res["ray_average_for_all_ranks_us"],
                     error_percent(res["ray_average_for_all_ranks_us"], pub),
                     res["ray_standard_deviation_us"], res["rtt_us"]["mean"],
                     res["rtt_us"]["p99"], res["per_rank_mean_us"]["sd"]])
    study.table("qlogic", [
        "ranks", "nodes", "reception", "round trips per rank", "published us",
        "AverageForAllRanks us", "error %", "StandardDeviation us", "plain mean us", "p99 us",
        "SD of per-rank means us"], rows,
        "QLogic cluster (qlogic-ib, 12 ranks per node), no routing, both reception "
        "policies; 1008 ranks run on the preset scaled to 84 nodes (--nodes 84)")


def _relay_figure(qdr_cases, qdr_runs, routes):
    import matplotlib
    matplotlib.use("Agg")
    import numpy as np
    from matplotlib.figure import Figure

    routed = [(c, r, st) for c, r, st in zip(qdr_cases, qdr_runs, routes) if st is not None]
    fig = Figure(figsize=(10, 3.4 * len(routed)))
    for k, (c, r, st) in enumerate(routed):
        rel = np.asarray(st.relays)
        means = np.asarray(r["ray_mean_us"])
        ax = fig.add_subplot(len(routed), 2, 2 * k + 1)
        ax.scatter(rel, means, s=5, alpha=0.5)
        ax.set_xlabel("relay events per rank, all ordered pairs")
        ax.set_ylabel("Ray's per-rank mean (us)")
        ax.set_title(_label(c, r), fontsize=10)
        ax.grid(alpha=0.3)
        hx = fig.add_subplot(len(routed), 2, 2 * k + 2)
        hx.hist(rel, bins=40)
        hx.set_xlabel("relay events per rank, all ordered pairs")
        hx.set_ylabel("ranks")
        hx.set_title(f"mean {st.relay_mean:.0f}, SD {st.relay_sd:.0f}, "
                     f"min {rel.min()}, max {rel.max()}", fontsize=10)
        hx.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def _reading(rho: float) -> str:
    """What a correlation between relay load and a rank's mean round trip says."""
    if abs(rho) < 0.2:
        return "the busiest relays are no slower than the others (at these loads a relay " \
               "pass rarely delays the rank's own reply)"
    if rho < 0:
        return "the busiest relays are the fastest ranks (a rank on many routes is a " \
               "well-connected one, which also reaches the others in fewer hops)"
    return "the busiest relays are slower (a pass spent relaying is not spent on the " \
           "rank's own reply)"


def _correlation(xs, ys) -> float | None:
    if len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    return statistics.correlation(xs, ys)


def _explain(study, qdr_cases, qdr_runs, routes, pair_runs, ql, ql_runs, flow) -> None:
    avg = [r["results"]["ray_average_for_all_ranks_us"] for r in qdr_runs]
    res = [r["results"] for r in qdr_runs]
    names = [_label(c, r) for c, r in zip(qdr_cases, qdr_runs)]
    best = min(range(len(avg)), key=avg.__getitem__)
    lines = [
        f"**Why routing wins under round-robin reception.** A round-robin rank probes one "
        f"entry of its connection list per pass, so a message waits about half a turn of "
        f"that list at each hop. The complete graph keeps {res[0]['connections']['mean']:.0f} "
        f"connections per rank: one hop costs {per_hop_us(res[0]):.0f} us. "
        f"{names[1]} keeps {res[1]['connections']['mean']:.0f} and routes over "
        f"{res[1]['hops']['mean']:.2f} hops per message at {per_hop_us(res[1]):.1f} us per "
        f"hop: AverageForAllRanks {avg[1]:.1f} us against {avg[0]:.1f} us, "
        f"{avg[0] / avg[1]:.1f} times faster (the publication says 'markedly faster' and "
        f"gives no figure). The fastest here is {names[best]} ({avg[best]:.1f} us: "
        f"{res[best]['connections']['mean']:.0f} connections, "
        f"{res[best]['hops']['mean']:.2f} hops).",
    ]
    spread = []
    for c, r, st in zip(qdr_cases, qdr_runs, routes):
        if st is None:
            continue
        rho = _correlation([float(x) for x in st.relays], [float(x) for x in r["ray_mean_us"]])
        spread.append(
            f"{_label(c, r)}: relay events per rank {min(st.relays)} to {st.relay_max} "
            f"(SD {st.relay_sd:.0f} on a mean of {st.relay_mean:.0f}), per-rank means "
            f"{min(r['ray_mean_us'])} to {max(r['ray_mean_us'])} us, correlation "
            + ("undefined (every rank relays as much)" if rho is None else
               f"{rho:+.2f}: {_reading(rho)}"))
    lines.append(
        "**Relay load and the spread over ranks.** Relay load is far from uniform on de "
        "Bruijn (the constant words loop to themselves and relay nothing; the table and "
        "figure give the distribution) and on the random graph; Kautz K(d, 2) spreads it "
        "evenly. How the ranks' own round trips follow it, overlay by overlay: "
        + "; ".join(spread) + ". A relay costs its rank one pass of its loop.")
    qdr0 = res[0]
    if qdr_cases[0].ranks == QDR_RANKS:
        lines.append(
            f"**Ray's StandardDeviation.** Published {QDR_PUBLISHED_SD} us on the complete "
            f"graph; hopsim gives {qdr0['ray_standard_deviation_us']:.2f} us "
            f"({error_percent(qdr0['ray_standard_deviation_us'], QDR_PUBLISHED_SD):+.0f}%). "
            "hopsim's ranks are alike but for their place in the nodes, so its spread is the "
            f"sampling noise of {qdr_cases[0].exchanges} random destinations per rank; the "
            "published spread (3% of the mean) is a difference between the real ranks "
            "(nodes, cores, interference) that no preset value describes. The average is "
            "the figure the preset's pass cost was fitted to, so its error says only that "
            f"the fit (made at {derive.QDR_EXCHANGES} round trips per rank) holds at "
            f"{qdr_cases[0].exchanges}.")
    p = [r["results"] for r in pair_runs]
    lines.append(
        f"**{qdr_cases[0].platform.name} at "
        f"{QUICK_SMALL_RANKS if study.quick else SMALL_RANKS} ranks, RayPlatform's random "
        f"graph with and without routing:** {p[0]['ray_average_for_all_ranks_us']:.1f} us "
        f"without, {p[1]['ray_average_for_all_ranks_us']:.1f} us with "
        f"({p[1]['hops']['mean']:.2f} hops, {p[1]['connections']['mean']:.1f} connections "
        f"per rank). No figure is published for this pair.")
    by = {(c.ranks, c.reception): r["results"] for c, r in zip(ql, ql_runs)}
    big = max(c.ranks for c in ql)
    rr, an = by[(big, "round-robin")], by[(big, "any-source")]
    lines.append(
        f"**QLogic.** Round-robin costs {rr['ray_average_for_all_ranks_us'] - an['ray_average_for_all_ranks_us']:.1f} "
        f"us more than any-source at {big} ranks (a turn of a {big}-entry list at "
        f"{qlogic_pass_us(ql):.4f} us per pass is {big * qlogic_pass_us(ql):.1f} us; a message "
        "waits about half of one at each end). At 120 ranks any-source stays under the "
        "published 19 us: the preset has no cost that grows with the number of ranks "
        "besides the round-robin list. The 36-rank figures are the ones the preset was "
        "fitted to, and they miss for two reasons that this table separates: the fit "
        "(`python -m hopsim.platforms.derive qlogic-ib`) matched the plain mean of all "
        "round trips on the flow transport, whereas Ray's AverageForAllRanks averages each "
        "rank's integer mean of whole-microsecond round trips (truncation: "
        f"{by[(36, 'any-source')]['rtt_us']['mean'] - by[(36, 'any-source')]['ray_average_for_all_ranks_us']:.2f} us "
        "here at 36 ranks, any-source), and the queue transport lets the 12 ranks sharing a "
        "NIC go one after the other instead of sharing it (on flow: "
        f"{flow[(36, 'any-source')]['ray_average_for_all_ranks_us']:.2f} and "
        f"{flow[(36, 'round-robin')]['ray_average_for_all_ranks_us']:.2f} us, against "
        f"{by[(36, 'any-source')]['ray_average_for_all_ranks_us']:.2f} and "
        f"{by[(36, 'round-robin')]['ray_average_for_all_ranks_us']:.2f} on queue). "
        "1008 ranks are not published: the preset (10 nodes of 12 cores) is scaled to 84 "
        "nodes with the same per-node values (`--nodes 84`, 12 ranks per node in blocks).")
    for line in lines:
        study.text(line)


def qlogic_pass_us(ql) -> float:
    return ql[0].platform.pass_us
