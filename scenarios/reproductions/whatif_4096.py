"""whatif-4096: which RayPlatform overlay at about 4096 ranks, on every cloud and cluster
preset, with either reception policy?

Complete graph (routing off), Kautz K(63, 2) (4032 ranks: no Kautz graph has 4096
vertices; 63 connections, any rank within 2 hops), de Bruijn B(2, 12) (Ray's default
degree 2: 3 connections, up to 12 hops) and hopsim's seeded random graph (n log2 n / 2
edges), each with any-source and round-robin reception, on every preset that
`hopsim platforms` lists except the analytic two-nodes platform, nodes filled with the
preset's cores (more nodes than the preset has: the platform is scaled, same per-node
values). Ray's network test as in ray-routing; the engine routes and computes every
statistic.
"""
from __future__ import annotations

from ._ray_network_test import Case, per_hop_us, run_cases

NAME = "whatif-4096"
TITLE = ("What if 4096 ranks: complete vs Kautz K(63,2) vs de Bruijn vs random, on every "
         "cloud and cluster preset, both reception policies")

RANKS, QUICK_RANKS = 4096, 64
# 10 round trips per rank (Ray's default is 1000): the means of two seeds differ by about
# 2% at 4096 ranks (docs/overlays.md, "The advisor"), far below the differences between
# overlays, and it keeps the 80-odd runs within minutes.
EXCHANGES, QUICK_EXCHANGES = 10, 10
RECEPTIONS = ("any-source", "round-robin")
OVERLAYS = (  # (family, label) in the order of the tables
    ("complete", "complete (routing off)"),
    ("kautz", "Kautz, largest degree that fits"),
    ("debruijn", "de Bruijn, degree 2 (Ray's default)"),
    ("random", "random (hopsim's seeded graph)"),
)
# Not an environment: the minimal platform for closed-form checks.
NOT_ENVIRONMENTS = {"two-nodes": "the minimal analytic platform, not a measured environment"}
# --quick: one preset of each kind (a cloud with and without noise, both clusters; qlogic-ib
# exercises a partly filled last node).
QUICK_PRESETS = ("ec2-10gbe", "gce-n1-standard-1", "qdr-ib", "qlogic-ib")


def presets(quick: bool = False) -> list[str]:
    """The presets to run: every built-in preset but the analytic ones."""
    from ...platforms import list_presets
    names = [p for p in list_presets() if p not in NOT_ENVIRONMENTS]
    return [p for p in names if p in QUICK_PRESETS] if quick else names


def kautz_ranks(ranks: int) -> int:
    from .ray_routing import kautz_ranks as below
    return below(ranks)


def cases(study) -> list[Case]:
    n = QUICK_RANKS if study.quick else RANKS
    ex = QUICK_EXCHANGES if study.quick else EXCHANGES
    out = []
    for name in presets(study.quick):
        plat = study.platform(name)
        for reception in RECEPTIONS:
            for family, label in OVERLAYS:
                ranks = kautz_ranks(n) if family == "kautz" else n
                # The queue transport is for star platforms; any other keeps its own.
                transport = "queue" if plat.topology == "star" else plat.transport
                out.append(Case(plat, ranks, plat.cores, family, reception, ex,
                                seed=study.seed, transport=transport, tags={"label": label}))
    return out


def run(study) -> None:
    all_cases = cases(study)
    # The random graph's all-pairs routes are the costliest part of a run (seconds at
    # 4096 ranks): those first, so that the workers finish together.
    order = sorted(range(len(all_cases)), key=lambda i: all_cases[i].overlay != "random")
    done = run_cases(study, [all_cases[i] for i in order], "whatif-4096 runs")
    runs = [None] * len(all_cases)
    for i, r in zip(order, done):
        runs[i] = r
    rows, groups = [], {}
    for c, r in zip(all_cases, runs):
        groups.setdefault((c.platform.name, c.reception), []).append((c, r))
    for (name, reception), members in groups.items():
        complete = next(r["results"]["rtt_us"]["mean"] for c, r in members
                        if c.overlay == "complete")
        ranked = sorted(members, key=lambda m: m[1]["results"]["rtt_us"]["mean"])
        for c, r in members:
            res = r["results"]
            rows.append([
                name, reception, res["overlay"]["label"], c.ranks, r["nodes"], c.per_node,
                res["rtt_us"]["mean"], res["rtt_us"]["p99"],
                res["ray_average_for_all_ranks_us"], res["hops"]["mean"],
                res["connections"]["mean"], per_hop_us(res), res["relays"]["mean"],
                res["relays"]["max"], complete / res["rtt_us"]["mean"],
                1 + [m[0] for m in ranked].index(c)])
    study.text(
        f"Ray's network test (4000-byte request, empty reply, {all_cases[0].exchanges} round "
        f"trips per rank; Ray's default is 1000) at {all_cases[0].ranks} ranks "
        f"({kautz_ranks(all_cases[0].ranks)} for Kautz) on every preset `hopsim platforms` "
        f"lists but {', '.join(NOT_ENVIRONMENTS)} (" + "; ".join(NOT_ENVIRONMENTS.values())
        + "). Each preset's nodes are filled with its cores (its `nodes.cores` ranks per "
        "node) and the node count scaled to what the ranks need"
        + "".join(f"; {c.platform.name}'s {c.per_node} cores do not divide {c.ranks}, so "
                  "its last node holds the remainder (an explicit block map)"
                  for c in all_cases if c.overlay == "complete" and c.reception == RECEPTIONS[0]
                  and c.ranks % c.per_node)
        + ". "
        "Transport: `queue` (per-link FIFO queues; docs/validation.md, \"Which transport\": "
        "within the trial spread of fair sharing on the emulated cluster; star platforms "
        "only: " + (", ".join(sorted({f"{c.platform.name} runs on {c.transport}"
                                     for c in all_cases if c.transport != "queue"}))
                    or "all of these are") + f"). Seed {study.seed} draws the destinations, the "
        "random graph and the GCE presets' per-run noise.")
    study.table("overlays", [
        "platform", "reception", "overlay", "ranks", "nodes", "ranks per node", "mean us",
        "p99 us", "AverageForAllRanks us", "mean hops", "connections per rank", "us per hop",
        "relays per rank mean", "relays per rank max", "speed-up over complete",
        "place (1 = fastest)"], rows,
        "Every preset x reception x overlay: mean and p99 of all round trips, Ray's "
        "AverageForAllRanks (per-rank means of round trips up to 4096 us only, so it drops "
        "the slowest where round trips exceed 4 ms), hops, connections per rank "
        "(round-robin list), cost per hop (mean round trip / 2 x hops) and relay events")
    winners = []
    for (name, reception), members in groups.items():
        ranked = sorted(members, key=lambda m: m[1]["results"]["rtt_us"]["mean"])
        (c1, r1), (c2, r2) = ranked[0], ranked[1]
        plat = c1.platform
        winners.append([name, reception, plat.latency_us, plat.pass_us,
                        r1["results"]["overlay"]["label"], r1["results"]["rtt_us"]["mean"],
                        r2["results"]["overlay"]["label"], r2["results"]["rtt_us"]["mean"],
                        r2["results"]["rtt_us"]["mean"] / r1["results"]["rtt_us"]["mean"]])
    study.table("winners", [
        "platform", "reception", "latency us", "pass us", "fastest", "mean us",
        "runner-up", "runner-up mean us", "runner-up / fastest"], winners,
        "The fastest overlay per preset and reception policy, beside the two platform "
        "values that decide it: the one-way latency and the cost of a pass of the rank's "
        "loop")
    study.figure("overlays", _figure(all_cases, runs),
                 "Mean round trip per preset and overlay (log scale), any-source (top) and "
                 "round-robin (bottom) reception")
    _explain(study, groups)
    for c in all_cases:  # the QDR cluster's two extremes under round-robin, to rerun alone
        if c.platform.name == "qdr-ib" and c.reception == "round-robin" \
                and c.overlay in ("complete", "kautz") and c.argv():
            study.command(c.argv())
    study.command(["hopsim", "advise", "--platform", "qdr-ib", "--ranks", str(RANKS),
                   "--ranks-per-node", "16", "--reception", "round-robin"])


def _figure(all_cases, runs):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    names = list(dict.fromkeys(c.platform.name for c in all_cases))
    fams = [f for f, _ in OVERLAYS]
    fig = Figure(figsize=(max(8, 1.1 * len(names) + 2), 8))
    width = 0.8 / len(fams)
    for k, reception in enumerate(RECEPTIONS):
        ax = fig.add_subplot(2, 1, k + 1)
        for j, fam in enumerate(fams):
            ys, label = [], fam
            for name in names:
                for c, r in zip(all_cases, runs):
                    if (c.platform.name, c.reception, c.overlay) == (name, reception, fam):
                        ys.append(r["results"]["rtt_us"]["mean"])
                        label = r["results"]["overlay"]["label"]
            ax.bar([i + (j - (len(fams) - 1) / 2) * width for i in range(len(names))], ys,
                   width, label=label)
        ax.set_yscale("log")
        ax.set_xticks(range(len(names)), names, rotation=20, fontsize=8)
        ax.set_ylabel("mean round trip (us)")
        ax.set_title(f"{reception} reception", fontsize=10)
        ax.grid(axis="y", alpha=0.3, which="both")
        if k == 0:
            ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    return fig


def _explain(study, groups) -> None:
    lines = []
    by_winner: dict[str, list[str]] = {}
    for (name, reception), members in groups.items():
        best = min(members, key=lambda m: m[1]["results"]["rtt_us"]["mean"])
        by_winner.setdefault(best[1]["results"]["overlay"]["label"], []).append(
            f"{name} {reception}")
    lines.append("**Which wins where.** " + "; ".join(
        f"{label}: {', '.join(where)}" for label, where in by_winner.items()) + ".")
    # Presets that order the four overlays alike, with the spread of their ratios: the
    # seven GCE presets differ only in latency and noise, and come out as one group.
    orders: dict[tuple, list] = {}
    for (name, reception), members in groups.items():
        ranked = sorted(members, key=lambda m: m[1]["results"]["rtt_us"]["mean"])
        key = tuple(m[0].overlay for m in ranked)
        ratio = ranked[1][1]["results"]["rtt_us"]["mean"] / ranked[0][1]["results"]["rtt_us"]["mean"]
        orders.setdefault(key, []).append((f"{name} {reception}", ratio))
    lines.append("**Orders** (fastest first). " + "; ".join(
        f"{' < '.join(order)}: {', '.join(w for w, _ in where)} (runner-up "
        + (f"{where[0][1]:.2f}" if len(where) == 1 else
           f"{min(r for _, r in where):.2f} to {max(r for _, r in where):.2f}")
        + " times the fastest)"
        for order, where in orders.items()) + ".")

    def pick(name, reception, family):
        for c, r in groups.get((name, reception), []):
            if c.overlay == family:
                return c, r["results"]
        return None, None

    # Three examples make the mechanism visible; the table has every preset's figures.
    examples = [(n, rec) for n, rec in (("qdr-ib", "round-robin"), ("qdr-ib", "any-source"),
                                        ("qlogic-ib", "round-robin"),
                                        ("ec2-10gbe", "round-robin"))
                if (n, rec) in groups]
    mech = []
    for name, reception in examples:
        c, res = pick(name, reception, "complete")
        k, kres = pick(name, reception, "kautz")
        d, dres = pick(name, reception, "debruijn")
        mech.append(
            f"{name}, {reception} (latency {c.platform.latency_us:g} us, pass "
            f"{c.platform.pass_us:g} us): a hop costs {per_hop_us(res):.1f} us on the "
            f"complete graph ({res['connections']['mean']:.0f} connections, 1 hop), "
            f"{per_hop_us(kres):.1f} us on {kres['overlay']['label']} "
            f"({kres['connections']['mean']:.0f} connections, {kres['hops']['mean']:.2f} "
            f"hops), {per_hop_us(dres):.1f} us on {dres['overlay']['label']} "
            f"({dres['connections']['mean']:.0f} connections, {dres['hops']['mean']:.2f} hops)")
    free = sorted({c.platform.name for members in groups.values() for c, _ in members
                   if c.platform.pass_us == 0})
    lines.append(
        "**Why: connections, relay passes, per-message cost.** A round trip is two "
        "messages, each crossing the mean hops; each hop costs the wire (latency, 4000 "
        "bytes at the link rate) plus the relay rank's pass and, under round-robin "
        "reception, the wait for the probe to come round the rank's connection list "
        "(about half a turn: connections x pass / 2). Where a pass costs nothing ("
        + ", ".join(free) + ": no published figure separates a pass from the latency, so "
        "`host.pass_us` stays 0) a hop costs about one latency whatever the list, both "
        "policies behave alike, and the fewest hops win: the complete graph. Where a pass "
        "costs something and reception is round-robin, the complete graph's list of "
        "every rank makes its one hop the dearest, and the overlay that balances "
        "connections against hops wins. With any-source reception the list costs "
        "nothing and the complete graph's single hop wins again. For example: "
        + "; ".join(mech) + " (every preset's figures: the table's `us per hop`).")
    lines.append(
        "**Caveats.** Ray's AverageForAllRanks keeps only round trips up to 4096 us, so "
        "where they are longer (multi-hop routes on the cloud presets, the complete "
        "graph under round-robin on the clusters) it understates the mean: the winner is "
        "decided on the mean of all round trips. Where the pass cost is not measured (0), "
        "a real per-pass cost like the QDR cluster's would make round-robin penalise the "
        "complete graph there too. The random graph is "
        "hopsim's seeded one (RayPlatform's own takes minutes to route at 4096 ranks; "
        "ray-routing uses it at 512 and 1024). Other degrees are not in this comparison: "
        "`hopsim advise` tries every family and degree that fits, and on qdr-ib with "
        "round-robin reception finds de Bruijn B(16, 3) (17 connections, 3 hops) faster "
        "still (docs/overlays.md, \"The advisor\"). None of this has a published figure: "
        "it is a prediction from the presets.")
    for line in lines:
        study.text(line)
