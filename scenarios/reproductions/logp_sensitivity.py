"""logp-sensitivity: LogGP's four parameters varied one at a time, after Martin, Vahdat,
Culler and Anderson, "Effects of Communication Latency, Overhead, and Bandwidth in a
Cluster Architecture" (ISCA 1997).

Each parameter is mapped onto platform keys (docs/model.md) and raised above the
baseline preset by the same added time per message; the engine runs every point
(api.simulate); this module computes slowdowns and fits a line to each (scipy).
"""
from __future__ import annotations

NAME = "logp-sensitivity"
TITLE = "LogGP sensitivity (Martin, Vahdat, Culler, Anderson 1997): L, o, g, G one at a " \
        "time on round trips and IMB Exchange, 32 to 4096 ranks"

BASELINE = "qlogic-ib"      # a measured cluster with any-source reception and no host costs
MESSAGE_BYTES = 4000        # latency_checker's request and reply; the Exchange's size too
RANKS, QUICK_RANKS = (32, 256, 4096), (8, 16)
ADDED_US, QUICK_ADDED_US = (0, 10, 25, 50, 100), (0, 50, 100)
EXCHANGES, QUICK_EXCHANGES = 50, 20          # round trips per rank
REPETITIONS, QUICK_REPETITIONS = 20, 5       # Exchange repetitions
TRANSPORT = "queue"
# "linear": the fitted line explains at least this share of the variance and misses no
# point by more than this percentage of the slowdowns' span (R^2 alone hides a knee).
LINEAR_R2, LINEAR_RESIDUAL_PCT = 0.99, 5.0
PARAMETERS = ("L", "o", "g", "G")
WORKLOADS = ("roundtrip", "exchange")

# LogGP -> hopsim, the varied keys and why (docs/model.md, "A rank: the pass loop").
MAPPING = {
    "L": ("network.latency_us",
          "latency: time in flight between nodes; [intranode] follows it (unset in the "
          "baseline)"),
    "o": ("host.send_overhead_us + host.recv_overhead_us",
          "overhead: CPU time per send and per receive, the rank does nothing else; both "
          "raised by the same amount, as LogP charges o at each end"),
    "g": ("host.gap_us",
          "gap: a rank's sends leave at least g apart (per-message rate); not a CPU cost. "
          "network.nic_message_us, the per-node NIC service time, is not used: it also "
          "delays an isolated message by 2c, which LogP's g does not"),
    "G": ("network.bandwidth_gbps",
          "per-byte gap: G = 8 / (1000 x bandwidth_gbps) us per byte; raising G by dG sets "
          "bandwidth_gbps = 8 / (1000 (G0 + dG)); [intranode] follows it. The per-byte CPU "
          "cost host.per_byte_overhead_ns is overhead, not G, and stays 0"),
}
# Time per round trip (roundtrip) or repetition (exchange) that one added us of the
# parameter costs, counted by hand without contention (explained in the report).
HAND_COUNT = {
    ("roundtrip", "L"): "2", ("roundtrip", "o"): "4 to 6", ("roundtrip", "g"): "0 to 2",
    ("roundtrip", "G"): "2 or more",
    ("exchange", "L"): "1", ("exchange", "o"): "4", ("exchange", "g"): "1 to 2",
    ("exchange", "G"): "2",
}


def per_byte_gap_us(plat) -> float:
    """LogGP's G of a platform: us per byte at its line rate."""
    return 8.0 / (1000.0 * plat.bandwidth_gbps)


def vary(plat, parameter: str, added_us: float, message_bytes: int = MESSAGE_BYTES):
    """The platform with one LogGP parameter raised by added_us per message (for G, by
    added_us / message_bytes per byte, so a message of that size pays added_us more)."""
    if parameter == "L":
        return plat.replace(latency_us=plat.latency_us + added_us)
    if parameter == "o":
        return plat.replace(send_overhead_us=plat.send_overhead_us + added_us,
                            recv_overhead_us=plat.recv_overhead_us + added_us)
    if parameter == "g":
        return plat.replace(gap_us=plat.gap_us + added_us)
    if parameter == "G":
        g = per_byte_gap_us(plat) + added_us / message_bytes
        return plat.replace(bandwidth_gbps=8.0 / (1000.0 * g))
    raise ValueError(f"LogGP parameter {parameter!r}")


def key_value(plat, parameter: str) -> float:
    """The varied key's value (bandwidth_gbps for G, the send overhead for o)."""
    return {"L": plat.latency_us, "o": plat.send_overhead_us, "g": plat.gap_us,
            "G": plat.bandwidth_gbps}[parameter]


def measure(plat, workload: str, ranks: int, seed: int, exchanges: int, repetitions: int,
            transport: str = TRANSPORT) -> float:
    """us per round trip (mean of every round trip, no cut) or per Exchange repetition
    (t_max, the time IMB's bandwidth uses)."""
    from ...api import simulate
    plat = plat.replace(nodes=max(plat.nodes, ranks))   # one rank per node, as LogP
    if workload == "roundtrip":
        r = simulate(plat, "roundtrip", ranks=ranks, ranks_per_node=1, seed=seed,
                     request_bytes=MESSAGE_BYTES, reply_bytes=MESSAGE_BYTES,
                     exchanges=exchanges, destinations="independent", transport=transport)
        return r.results["rtt_us"]["mean"]
    r = simulate(plat, "exchange", ranks=ranks, ranks_per_node=1, seed=seed,
                 sizes=[MESSAGE_BYTES], repetitions=repetitions, transport=transport)
    return r.results["rows"][0]["t_max_us"]


def fit(added, slowdowns) -> dict:
    """A least-squares line through (added us, slowdown): slope per us, intercept, R^2 and
    the largest residual as a percentage of the slowdowns' span (max - min)."""
    import numpy as np
    from scipy import stats
    x, y = np.asarray(added, float), np.asarray(slowdowns, float)
    line = stats.linregress(x, y)
    fitted = line.intercept + line.slope * x
    span = float(np.ptp(y))
    worst = float(np.max(np.abs(y - fitted))) / span if span > 0 else 0.0
    r2 = float(line.rvalue ** 2) if span > 0 else 1.0
    return {"slope": float(line.slope), "intercept": float(line.intercept), "r2": r2,
            "max_residual_pct": 100.0 * worst}


def step_slopes(added, times) -> tuple[float, float]:
    """us of time per added us over the first and over the last step of the range: a knee
    (a parameter hidden at first, then paid in full) shows as two different numbers."""
    return ((times[1] - times[0]) / (added[1] - added[0]),
            (times[-1] - times[-2]) / (added[-1] - added[-2]))


def is_linear(f: dict) -> bool:
    return f["r2"] >= LINEAR_R2 and f["max_residual_pct"] <= LINEAR_RESIDUAL_PCT


def sweep(study, baseline, workload: str, ranks: int, added, exchanges: int,
          repetitions: int, transport: str = TRANSPORT) -> dict:
    """{parameter: [time us at each added value]}; the baseline run is shared."""
    base = measure(baseline, workload, ranks, study.seed, exchanges, repetitions, transport)
    out = {}
    for p in PARAMETERS:
        out[p] = [base if a == 0 else
                  measure(vary(baseline, p, a), workload, ranks, study.seed, exchanges,
                          repetitions, transport) for a in added]
    return out


def run(study) -> None:
    baseline = study.platform(BASELINE)
    quick = study.quick
    ranks_list = QUICK_RANKS if quick else RANKS
    added = QUICK_ADDED_US if quick else ADDED_US
    exchanges = QUICK_EXCHANGES if quick else EXCHANGES
    reps = QUICK_REPETITIONS if quick else REPETITIONS
    _intro(study, baseline, ranks_list, added, exchanges, reps)

    points, slopes, curves = [], [], {}
    jobs = [(w, n) for w in WORKLOADS for n in ranks_list]
    for w, n in study.progress(jobs, "logp-sensitivity"):
        times = sweep(study, baseline, w, n, added, exchanges, reps)
        curves[(w, n)] = times
        for p in PARAMETERS:
            sd = [t / times[p][0] for t in times[p]]
            for a, t, x in zip(added, times[p], sd):
                points.append([w, n, p, MAPPING[p][0], a, key_value(vary(baseline, p, a), p),
                               t, x])
            f = fit(added, sd)
            first, last = step_slopes(added, times[p])
            slopes.append({"workload": w, "ranks": n, "parameter": p, **f,
                           "time_slope": f["slope"] * times[p][0], "first": first,
                           "last": last, "linear": is_linear(f), "top": sd[-1]})
    study.table("mapping", ["LogGP", "hopsim key(s)", "baseline value", "how it is varied"],
                [[p, MAPPING[p][0], key_value(baseline, p) if p != "G"
                  else f"{per_byte_gap_us(baseline) * 1000:.4g} ns/B "
                       f"({baseline.bandwidth_gbps:g} Gbit/s)", MAPPING[p][1]]
                 for p in PARAMETERS],
                f"LogGP's parameters as hopsim's platform keys, baseline {BASELINE}")
    study.table("slopes", [
        "workload", "ranks", "parameter", "slope (slowdown per us)",
        "time slope (us per us)", "first step (us per us)", "last step (us per us)",
        "hand count (us per us)", "intercept", "R^2", "max residual % of span",
        f"linear (R^2 >= {LINEAR_R2}, residual <= {LINEAR_RESIDUAL_PCT:g}% of span)",
        f"slowdown at +{added[-1]} us"],
        [[r["workload"], r["ranks"], r["parameter"], r["slope"], r["time_slope"], r["first"],
          r["last"], HAND_COUNT[(r["workload"], r["parameter"])], r["intercept"], r["r2"],
          r["max_residual_pct"], "yes" if r["linear"] else "no", r["top"]] for r in slopes],
        "Least-squares line through each parameter's slowdowns (scipy.stats.linregress); "
        "the time slope is the slope times the baseline time")
    study.figure("slowdowns", _figure(curves, added, ranks_list),
                 "Slowdown against the added time per message, one parameter at a time")
    _findings(study, slopes, ranks_list, added)
    study.table("points", [
        "workload", "ranks", "parameter", "key", "added us per message", "key value",
        "time us", "slowdown"], points,
        f"Every point: time per round trip (roundtrip, mean without cut-off) or per "
        f"repetition (exchange, t_max), {MESSAGE_BYTES} B messages, one rank per node, "
        f"{TRANSPORT} transport; slowdown = time / baseline time")
    _transport_check(study, baseline, ranks_list[0], added, exchanges, reps)
    study.command(["hopsim", "simulate", "--platform", BASELINE, "--workload", "exchange",
                   "--ranks", "4096", "--nodes", "4096", "--sizes", str(MESSAGE_BYTES),
                   "--repetitions", str(REPETITIONS), "--transport", TRANSPORT])


def _transport_check(study, baseline, ranks, added, exchanges, reps):
    """The same points on the flow transport (the reference) at the smallest size."""
    rows, worst = [], {}
    for w in study.progress(WORKLOADS, "flow transport check"):
        q = sweep(study, baseline, w, ranks, added, exchanges, reps, TRANSPORT)
        f = sweep(study, baseline, w, ranks, added, exchanges, reps, "flow")
        for p in PARAMETERS:
            for a, tq, tf in zip(added, q[p], f[p]):
                d = 100.0 * (tq - tf) / tf
                rows.append([w, ranks, p, a, tq, tf, d])
                worst[(w, p)] = max(worst.get((w, p), 0.0), abs(d))
    study.table("transports", [
        "workload", "ranks", "parameter", "added us per message", f"{TRANSPORT} us",
        "flow us", f"{TRANSPORT} against flow %"], rows,
        f"The {TRANSPORT} transport (used above) against the flow transport (SimGrid's "
        f"fair sharing, the reference) at {ranks} ranks, every point")
    off = [f"{w} {p} (up to {d:.0f}%)" for (w, p), d in sorted(worst.items()) if d > 5]
    study.text(
        f"**Transport.** The points above run on the `{TRANSPORT}` transport (FIFO links, "
        "no SimGrid), which docs/model.md shows equal to the flow model wherever messages "
        "do not contend, and docs/validation.md found within 2 points of it on every IMB "
        "file of the emulated rigs; it is not validated where messages share a link. "
        f"Checked here on every point at {ranks} ranks (table `transports`): "
        + ("they agree within 5% everywhere." if not off else
           "they agree within 5% except " + ", ".join(off) + ": there the two models of a "
           "shared link differ (fair sharing slows every concurrent message, FIFO lets the "
           "first finish), so those slopes depend on the transport, the flow model's being "
           "the reference."))


def _intro(study, baseline, ranks_list, added, exchanges, reps):
    study.text(
        "Martin, Vahdat, Culler and Anderson (1997) slowed a Myrinet cluster's communication "
        "one LogGP parameter at a time (latency L, overhead o, gap g, per-byte gap G) and "
        "ran applications on it. They found applications most sensitive to overhead (a "
        "slowdown of 60x on 32 processors when o went from 3 to 103 us), sensitive to the "
        "gap, tolerant of latency and per-byte cost, and most slowdowns linear in o and g.\n\n"
        f"hopsim repeats the design on two communication patterns rather than "
        f"applications: any-to-any round trips (latency_checker's loop, {MESSAGE_BYTES}-byte "
        f"request and reply, {exchanges} round trips per rank, one destination stream per "
        f"rank so that no start-up convergence dominates) and IMB Exchange ({MESSAGE_BYTES} "
        f"bytes, {reps} repetitions), on {', '.join(map(str, ranks_list))} ranks, one rank per "
        f"node as in LogP. Baseline `{BASELINE}`: {baseline.summary()}, widened to one "
        f"node per rank (`nodes.count` = ranks). Each parameter "
        f"is raised by {', '.join(map(str, added[1:]))} us per message ({MESSAGE_BYTES}-byte "
        "message for G) above the baseline, the others held; the slowdown is the time "
        "against the baseline's. These patterns do nothing but communicate, so their "
        "slowdowns bound from above what an application that also computes would see.\n\n"
        "Hand counts (time per added us, no contention): a round trip pays L twice, o four "
        "times (two sends, two receives) and up to two more for the request of another rank "
        "it serves meanwhile, G twice (request and reply), and g only once a rank's sends "
        "(its request and the replies it serves, about two per round trip) come closer than "
        "g. An Exchange repetition pays L once, o four times (two sends and two receives "
        "in sequence), G twice (both messages leave one NIC), and g once (the second send "
        "waits) or twice (once g exceeds the repetition, both sends wait).")


def _findings(study, slopes, ranks_list, added):
    cases = {}
    for r in slopes:
        cases.setdefault((r["workload"], r["ranks"]), []).append(r)
    lines = []
    for (w, n), rows in cases.items():
        order = sorted(rows, key=lambda r: -r["top"])
        lines.append(f"- {w}, {n} ranks: "
                     + " > ".join(f"{r['parameter']} ({r['top']:.1f}x)" for r in order)
                     + "; linear: " + ", ".join(
                         f"{r['parameter']} {'yes' if r['linear'] else 'no'} "
                         f"(R^2 {r['r2']:.3f}, residual {r['max_residual_pct']:.1f}%)"
                         for r in rows))
    top = [max(rows, key=lambda r: r["top"])["parameter"] for rows in cases.values()]
    least = [min(rows, key=lambda r: r["top"])["parameter"] for rows in cases.values()]
    lin = [r for r in slopes if r["parameter"] in ("o", "g")]

    def worst(p):
        return max(r["max_residual_pct"] for r in slopes if r["parameter"] == p)

    def steps(p):
        rows = [r for r in slopes if r["parameter"] == p]
        return (f"{min(r['first'] for r in rows):.2f} to {max(r['first'] for r in rows):.2f} "
                f"us per us over the first step, {min(r['last'] for r in rows):.2f} to "
                f"{max(r['last'] for r in rows):.2f} over the last")
    study.text(
        f"**Findings, at +{added[-1]} us per message, parameters ordered by slowdown:**\n\n"
        + "\n".join(lines))
    study.text(
        f"**Beside the paper.** Overhead dominates in {top.count('o')} of {len(top)} cases "
        f"(paper: it dominates). The least harmful parameter is "
        + ", ".join(f"{p} in {least.count(p)}" for p in PARAMETERS if p in least)
        + f" of {len(least)} cases (paper: latency matters least). Slowdowns in o and g are "
        f"linear (R^2 >= {LINEAR_R2} and no point off the line by more than "
        f"{LINEAR_RESIDUAL_PCT:g}% of the slowdowns' span) in "
        f"{sum(r['linear'] for r in lin)} of {len(lin)} fits (paper: mostly linear); the "
        f"largest residual is {worst('o'):.1f}% for o and {worst('g'):.1f}% for g. o costs "
        f"{steps('o')}; g costs {steps('g')}. Where the first step costs less than the "
        "last, the parameter was partly hidden at first: overhead behind the time a message "
        "spends on the wire and in flight (a rank's second send overlaps its first "
        "message's transfer), the gap until a rank's sends come closer than g; beyond that "
        "every send and receive pays it in full and the line holds.")
    second = [sorted(rows, key=lambda r: -r["top"])[1]["parameter"]
              for rows in cases.values()]
    common = max(PARAMETERS, key=second.count)
    spread = max(max(r["top"] for r in slopes if (r["workload"], r["parameter"]) == key)
                 / min(r["top"] for r in slopes if (r["workload"], r["parameter"]) == key)
                 for key in {(r["workload"], r["parameter"]) for r in slopes}) - 1
    study.text(
        f"**Where hopsim differs, and why.** The second most harmful parameter is {common} "
        f"in {second.count(common)} of {len(second)} cases. The paper found applications "
        "tolerant of G; these patterns do nothing but move 4000-byte messages, so each "
        "message pays s x dG in full (twice per round trip, twice per repetition), where "
        "the paper's applications sent mostly short messages or overlapped bulk "
        "transfers with computation. "
        + ("Latency is the least harmful here too, but not because it is hidden: "
           if least.count("L") == len(least) else "Latency is not hidden here: ")
        + "a blocking round trip pays L twice and a repetition once, against four to six "
        "overheads. The rank count changes little: across "
        f"{', '.join(map(str, ranks_list))} ranks each slowdown at +{added[-1]} us moves "
        f"by at most {100 * spread:.1f}%, since with one rank per node and independent "
        "destinations a rank's work per round trip or repetition does not grow with the "
        "number of ranks.")


def _figure(curves, added, ranks_list):
    from matplotlib.figure import Figure   # no pyplot: no backend switch, nothing global
    fig = Figure(figsize=(4 * len(ranks_list), 7))
    axes = fig.subplots(len(WORKLOADS), len(ranks_list), squeeze=False)
    for i, w in enumerate(WORKLOADS):
        for j, n in enumerate(ranks_list):
            ax = axes[i][j]
            times = curves[(w, n)]
            for p, style in zip(PARAMETERS, ("o-", "s-", "^-", "d-")):
                ax.plot(added, [t / times[p][0] for t in times[p]], style, label=p)
            ax.set_title(f"{w}, {n} ranks", fontsize=10)
            ax.set_xlabel("added us per message")
            ax.set_ylabel("slowdown")
            ax.grid(alpha=0.3)
            if i == 0 and j == 0:
                ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
