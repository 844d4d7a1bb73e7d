"""Measurements -> platform values, one fitter per parameter group.

Each fitter declares the platform keys it writes. It runs only when the platform schema
knows every one of them (platforms.platform.FILE_KEYS) and the data shows what it needs;
otherwise it says why not, and the key keeps the base platform's value or its default.
The keys of the engine-model issue (token bucket, per-node NIC cost, rendezvous
threshold, noise) are fitted by the same code as soon as the schema has them.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import least_squares

from ..errors import InputError
from ..platforms.platform import FILE_KEYS, Platform
from .fit_pacing import fit_pacing
from .measurement import NIC_QUEUE_STATISTIC, Measurement
from .segments import Segment, classify, hinge, segments
from ..platforms.solve import solve

# Which statistic of which tool is a one-way ping-pong time.
PINGPONG_STATS = {("osu_latency", "latency_us"), ("netpipe", "latency_us"),
                  ("imb", "t_us"), ("hopsim", "latency_us")}
ROUNDTRIP_STATS = {("latency_checker", "lc_average_of_averages_us"),
                   ("ray", "ray_average_for_all_ranks_us"),
                   ("hopsim", "lc_average_of_averages_us")}
# Round trips per rank simulated when fitting to a round-trip figure (the engine is
# deterministic without noise; the tools' 10000+ only average their own jitter).
FIT_EXCHANGES = 1000


@dataclass
class Fitted:
    key: str
    value: float | int
    provenance: str


@dataclass
class Point:
    size: int
    value: float
    m: Measurement


@dataclass
class Data:
    """The measurements a fit uses, sorted by what they measure."""

    pingpong: list[Point] = field(default_factory=list)
    roundtrip: list[Measurement] = field(default_factory=list)
    ranks_per_node: int = 1
    placed: list[Measurement] = field(default_factory=list)  # 2+ ranks/node on 2+ nodes
    unused: list[Measurement] = field(default_factory=list)
    # A ping-pong of two ranks on one node beside the network's (calibrate --live
    # --campaign measures both): the intra-node path's own line.
    intra_pingpong: list[Point] = field(default_factory=list)

    @classmethod
    def of(cls, measurements: list[Measurement], ranks_per_node: int | None) -> "Data":
        d = cls()
        for m in measurements:
            if (m.rank is None and m.ranks_per_node and m.ranks_per_node >= 2
                    and m.ranks > m.ranks_per_node and m.workload in ("exchange", "roundtrip")):
                d.placed.append(m)
            elif m.rank is None and m.workload == "pingpong" and (m.tool, m.statistic) in PINGPONG_STATS:
                d.pingpong.append(Point(m.size, m.value, m))
            elif (m.rank is None and (m.tool, m.statistic) in ROUNDTRIP_STATS
                  and m.size is not None):
                d.roundtrip.append(m)
            else:
                d.unused.append(m)
        # Where the ping-pong ranks sat: the flag, else what the files say, else apart.
        rpns = {p.m.ranks_per_node for p in d.pingpong if p.m.ranks_per_node}
        d.ranks_per_node = ranks_per_node or (min(rpns) if rpns else 1)
        if ranks_per_node is None and d.ranks_per_node == 1 and len(rpns) > 1:
            # Files that record both placements: the one-node ping-pong is the intra path.
            d.intra_pingpong = [p for p in d.pingpong if (p.m.ranks_per_node or 1) >= 2]
            d.pingpong = [p for p in d.pingpong if (p.m.ranks_per_node or 1) < 2]
        return d

    @property
    def intranode(self) -> bool:
        """Both ping-pong ranks on one node: the data measures the intra-node path."""
        return self.ranks_per_node >= 2


def where(ms) -> str:
    """file:lines, compact: osu.txt:3-25, np.out:1-40."""
    by_file: dict[str, list[int]] = {}
    for m in ms:
        by_file.setdefault(m.source, []).append(m.line)
    parts = []
    for f, lines in by_file.items():
        lines = sorted(set(lines))
        parts.append(f"{f}:{lines[0]}" + (f"-{lines[-1]}" if len(lines) > 1 else ""))
    return ", ".join(parts)


def schema_has(*keys: str) -> bool:
    return all(k in FILE_KEYS.values() for k in keys)


class Fitter:
    name = ""
    keys: tuple[str, ...] = ()

    def enabled(self) -> str | None:
        """None, or why this fitter cannot run on this build of hopsim."""
        if not schema_has(*self.keys):
            return f"the platform schema has no {', '.join(self.keys)} yet"
        return None

    def fit(self, data: Data, platform: Platform, state: dict) -> tuple[list[Fitted], str | None]:
        raise NotImplementedError


class PingPongLine(Fitter):
    """Latency and bandwidth of the measured path: least squares (relative residuals) of
    t(s) = L + 8 s / (1000 B) + host costs, over every ping-pong size; with a protocol
    or rate breakpoint that the schema can model, over the segments that define L and B."""

    name = "latency and bandwidth"

    def __init__(self, intranode: bool):
        prefix = "intranode" if intranode else "network"
        self.keys = (f"{prefix}.latency_us", f"{prefix}.bandwidth_gbps")

    def fit(self, data, platform, state):
        if _paced(state):
            return [], _paced(state)
        pts = data.pingpong
        if len(pts) < 2 or len({p.size for p in pts}) < 2:
            return [], "needs ping-pong times at two sizes at least"
        s = np.array([p.size for p in pts], float)
        t = np.array([p.value for p in pts], float)
        segs: list[Segment] = state["segments"]
        use = np.ones(len(s), bool)
        how = "one line over all sizes"
        if state.get("model_breaks"):
            # The engine models the break itself: the small-message segment sets L; B is
            # the link rate, the first segment's under a token bucket (the later slope is
            # the bucket's), the last one's after a protocol switch.
            lo = segs[0]
            hi = (state["bucket_segments"][0] if state["model_breaks"] == "bucket" else segs[-1])
            if is_bandwidth(hi) and lo.intercept_us >= 0:
                how = (f"L from the {lo.first_bytes}..{lo.last_bytes} B segment, B from the "
                       f"{hi.first_bytes}..{hi.last_bytes} B segment")
                return self._result(data, lo.intercept_us, hi.bandwidth_gbps, how, pts, state)
            # The segment meant to give B has no measurable slope: fit the line instead,
            # over the sizes below the break (those the link rate alone explains).
            below = hi.last_bytes if state["model_breaks"] == "bucket" else segs[0].last_bytes
            use = s <= below
            how = f"one line over the sizes up to {below} B (below the modelled break)"
        host = (platform.send_overhead_us + platform.recv_overhead_us, 2e-3 * platform.per_byte_overhead_ns)

        def resid(x):
            L, inv_b = x
            model = L + host[0] + (8e-3 * inv_b + host[1]) * s
            return (model - t)[use] / t[use]

        if np.unique(s[use]).size < 2:
            return [], "the ping-pong sizes do not determine a finite line"
        x0 = [max(float(np.min(t)), 1e-3), 1.0]
        # soft_l1: residuals beyond 10% count linearly, so a few rows hit by another
        # process's time slice (common on a loaded machine) do not drag the line.
        r = least_squares(resid, x0, bounds=([0.0, 1e-9], [np.inf, np.inf]), x_scale="jac",
                          loss="soft_l1", f_scale=0.1)
        L, inv_b = r.x
        if not (math.isfinite(L) and math.isfinite(1.0 / inv_b)):
            return [], "the ping-pong sizes do not determine a finite line"
        return self._result(data, float(L), 1.0 / float(inv_b), how, [p for p, u in zip(pts, use) if u], state)

    def _result(self, data, L, B, how, pts, state):
        # Below the engine's 1 ns resolution a fitted latency is zero (a bound of the fit).
        L = 0.0 if L < 1e-3 else L
        ms = [p.m for p in pts]
        state["line"] = (L, B)
        prov = (f"fit: {how}, robust least squares (scipy least_squares, soft_l1 at 10%) on "
                f"relative residuals of the one-way ping-pong time, {len(pts)} rows from {where(ms)}")
        return [Fitted(self.keys[0], _stored(L), prov),
                Fitted(self.keys[1], _stored(B), prov)], None


class Pacing(Fitter):
    """A step after one packet, then a connection's own rate (fit_pacing.py): writes the
    line (L, R) of one-packet messages, the pacing, and the token bucket if the curve
    shows one; the segment fitters below then stand aside."""

    name = "pacing"
    keys = ("network.latency_us", "network.bandwidth_gbps", "network.pacing_gbps",
            "network.pacing_above_bytes")

    def fit(self, data, platform, state):
        if data.intranode:
            return [], "the ping-pong ran inside a node (shared memory paces nothing)"
        fit, why = fit_pacing([p.size for p in data.pingpong], [p.value for p in data.pingpong])
        if fit is None:
            return [], why
        state["paced"] = fit
        state["line"] = (fit.latency_us, fit.line_gbps)
        state["model_us"] = fit.at
        prov = f"fit: {fit.describe()} ({where(p.m for p in data.pingpong)})"
        out = [Fitted("network.latency_us", _stored(max(fit.latency_us, 0.0)), prov),
               Fitted("network.bandwidth_gbps", _stored(fit.line_gbps), prov),
               Fitted("network.pacing_gbps", _stored(fit.paced_gbps), prov),
               Fitted("network.pacing_above_bytes", fit.above_bytes,
                      f"{prov}; the last size on the one-packet line (the step lies between "
                      f"{fit.above_bytes} and {fit.first_paced} B)")]
        if fit.bucket_gbps is not None:
            out += [Fitted("network.bucket_gbps", _stored(fit.bucket_gbps), prov),
                    Fitted("network.bucket_burst_bytes", int(round(fit.burst_bytes)), prov)]
        return out, None


def _paced(state) -> str | None:
    return "fitted by the pacing model (see pacing)" if state.get("paced") else None


class ProtocolThreshold(Fitter):
    """The eager/rendezvous switch: the size below the first jump of the curve."""

    name = "eager threshold"
    keys = ("host.eager_threshold_bytes",)

    def fit(self, data, platform, state):
        if _paced(state):
            return [], "the step after one packet is the pacing's, not a protocol switch"
        jumps = [b for b in state["breaks"] if b.kind == "protocol"]
        if not jumps:
            return [], "no jump in the ping-pong curve (no protocol switch seen)"
        b = jumps[0]
        state["model_breaks"] = "protocol"
        return [Fitted(self.keys[0], int(b.below_bytes),
                       f"fit: segmented regression of the ping-pong curve, a jump of "
                       f"{b.jump_us:.3g} us between {b.below_bytes} and {b.above_bytes} bytes "
                       f"({where(p.m for p in data.pingpong)})")], None


class TokenBucket(Fitter):
    """A burst at the link rate R then a sustained rate r: the slope rises at a size with
    no jump. Under the engine's bucket (docs/model.md) a message larger than the burst b,
    sent into a full bucket, takes L + (s - b)/r, and one within it L + s/R: the two
    lines cross at s* = R b / (R - r), so b = s* (1 - r/R). s*, R and r come from one
    continuous curve bent at s* fitted over both segments (segments.hinge), not from
    where two separately fitted lines happen to cross."""

    name = "token bucket"
    keys = ("network.bucket_gbps", "network.bucket_burst_bytes")

    def fit(self, data, platform, state):
        if _paced(state):
            return [], _paced(state)
        segs = state["segments"]
        seen = None
        # The last rise: the sustained rate is the one the largest messages see.
        for (lo, hi), b in reversed(list(zip(zip(segs, segs[1:]), state["breaks"]))):
            if b.kind != "rate" or hi.slope_us_per_byte <= lo.slope_us_per_byte * 1.2:
                continue
            if not (is_bandwidth(lo) and is_bandwidth(hi)):
                # A flat small-size segment (latency, a pass grid) then a sloped one is the
                # line's own shape, not a burst: the lower slope measures no rate.
                seen = (f"the slope rises at {b.below_bytes}..{b.above_bytes} B, but "
                        f"serialisation is under a tenth of the lower segment's time "
                        f"({lo.first_bytes}..{lo.last_bytes} B): its slope is no burst rate")
                continue
            state["model_breaks"] = "bucket"
            state["bucket_segments"] = (lo, hi)
            bend = hinge([p.size for p in data.pingpong], [p.value for p in data.pingpong],
                         lo.first_bytes, hi.last_bytes)
            if bend is not None:
                slopes, crossing = (bend.slope_below, bend.slope_above), bend.at_bytes
                how = (f"one continuous two-slope curve over {lo.first_bytes}.."
                       f"{hi.last_bytes} B, bent at {crossing:.0f} B")
            else:
                slopes = (lo.slope_us_per_byte, hi.slope_us_per_byte)
                crossing = (hi.intercept_us - lo.intercept_us) / (slopes[0] - slopes[1])
                how = f"lines crossing at {crossing:.0f} B"
            R, r = 8e-3 / slopes[0], 8e-3 / slopes[1]   # Gbit/s
            burst = max(crossing, 0.0) * (1.0 - r / R)
            prov = (f"fit: segmented regression, slope change at {b.below_bytes}..{b.above_bytes} "
                    f"bytes; {how} ({R:.4g} then {r:.4g} Gbit/s), burst = bend x (1 - r/R) "
                    f"({where(p.m for p in data.pingpong)})")
            return [Fitted("network.bucket_gbps", _stored(r), prov),
                    Fitted("network.bucket_burst_bytes", int(round(burst)), prov)], None
        return [], seen or "no slope rise without a jump in the ping-pong curve"


def is_bandwidth(seg: Segment) -> bool:
    """A segment whose slope is a rate: serialisation is at least a tenth of its time at
    its largest size (below that the slope is within the scatter of the latency)."""
    if not (seg.slope_us_per_byte > 0 and math.isfinite(seg.bandwidth_gbps)):
        return False
    return seg.slope_us_per_byte * seg.last_bytes >= 0.1 * seg.at(seg.last_bytes)


class RoundTripSolve(Fitter):
    """The per-pass cost (or, without ping-pong data, the latency) that makes the
    simulated round trip of the measured latency_checker / Ray run equal the measured
    one: Brent's method over the engine."""

    name = "pass cost from round trips"
    keys = ("host.pass_us",)

    def fit(self, data, platform, state):
        if not data.roundtrip:
            return [], "needs a latency_checker or Ray round-trip file"
        # The run with fewest ranks: more ranks than the machine has cores would put the
        # scheduler's turns into the pass (MachineTurn's host.turn_us).
        m = min(data.roundtrip, key=lambda m: m.ranks)
        from .validate import case_of
        case = case_of(m, data.ranks_per_node)
        if "line" in state:
            key, field_, lo, hi = "host.pass_us", "pass_us", 0.0, max(m.value, 1.0)
        else:
            key, field_, lo, hi = ("network.latency_us", "latency_us", 0.0, m.value)
        case.run["exchanges"] = min(case.run.get("exchanges", FIT_EXCHANGES), FIT_EXCHANGES)
        f = lambda x: case.simulate(platform.replace(**{field_: x}))
        try:
            x = solve(f, m.value, lo, hi, 1e-6, f"{key} from {m.where}")
        except InputError as e:
            # Typically: the round trip at pass_us = 0 is already as slow as measured,
            # the ping-pong latency explaining all of it.
            return [], f"not reachable with {key} alone: {e}"
        sim = f(_stored(x))
        return [Fitted(key, _stored(x),
                       f"fit: Brent's method over the engine so that {case.label()} "
                       f"({case.run['exchanges']} round trips per rank simulated) gives the "
                       f"measured {m.statistic} {m.value:.6g} us ({m.where}); simulated "
                       f"{sim:.6g} us ({100 * (sim - m.value) / m.value:+.2f}%)")], None


class NicMessage(Fitter):
    """The per-node NIC message cost: a run with several ranks per node on two or more
    nodes (the file must record its placement, as hopsim's and live JSON do), solved for
    by Brent's method over the engine once latency and bandwidth are set."""

    name = "per-node NIC message cost"
    keys = ("network.nic_message_us",)

    def fit(self, data, platform, state):
        from .validate import case_of
        placed = [m for m in data.placed if case_of(m) is not None]
        if platform.machine_cores and placed:
            # Nodes on one machine: a run with more ranks than its cores is the scheduler's
            # turns (MachineTurn's host.turn_us), not the NIC's cost.
            placed = [m for m in placed if m.ranks <= platform.machine_cores]
            if not placed:
                return [], (f"every run with 2+ ranks per node has more ranks than the "
                            f"machine's {platform.machine_cores} cores (--machine-cores): "
                            f"their time is the machine's turns")
        if not placed:
            return [], ("needs an exchange or round-trip run with 2+ ranks per node on 2+ "
                        "nodes, from a file that records ranks_per_node (hopsim or live JSON)")
        m = placed[0]
        case = case_of(m)
        if case.workload == "roundtrip":
            case.run["exchanges"] = min(case.run["exchanges"], FIT_EXCHANGES)
        # An isolated message pays the cost once at each end (L + s/R + 2c): a ping-pong
        # line's latency already holds 2c. Keep the ping-pong, move c out of L.
        L = state["line"][0] if "line" in state and not data.intranode else None
        if L is not None:
            f = lambda x: case.simulate(platform.replace(nic_message_us=x, latency_us=L - 2 * x))
            hi = L / 2
        else:
            f = lambda x: case.simulate(platform.replace(nic_message_us=x))
            hi = m.value
        try:
            x = solve(f, m.value, 0.0, hi, 1e-6, f"network.nic_message_us from {m.where}")
        except InputError as e:
            return [], f"not reachable with network.nic_message_us: {e}"
        x = _stored(x)
        sim = f(x)
        prov = (f"fit: Brent's method over the engine so that {case.label()} gives the "
                f"measured {m.statistic} {m.value:.6g} us ({m.where}); simulated "
                f"{sim:.6g} us ({100 * (sim - m.value) / m.value:+.2f}%)")
        out = [Fitted("network.nic_message_us", x, prov)]
        if L is not None:
            out.append(Fitted("network.latency_us", _stored(L - 2 * x),
                              f"the ping-pong line's {L:.6g} us less twice the NIC message "
                              f"cost (one at each end); {prov}"))
        return out, None


def turn_run(runs, size=lambda r: r.size):
    """The run the machine's turn is fitted on, of those beyond the cores: the smallest
    message's (the least of its time is bytes), then the fewest ranks. One rule for the
    fit (MachineTurn) and for the check on the others (calibrate._turn_checks)."""
    return min(runs, key=lambda r: (size(r), r.ranks))


class MachineTurn(Fitter):
    """Every node on one machine (calibrate --machine-cores): the turn (host.turn_us) that
    makes the simulated round trip of a run with more ranks than the machine's cores
    equal the median of its trials: Brent's method over the engine, on the smallest
    message's run (the least of its time is bytes). A pass of n turns with n ranks per
    core (docs/model.md) is the scheduler's time, which only such runs show. calibrate
    solves it again on the joint fit's platform (calibrate._turn_on)."""

    name = "machine's turn from round trips"
    keys = ("host.turn_us",)

    def fit(self, data, platform, state):
        from .validate import case_of
        if not platform.machine_cores:
            return [], "needs --machine-cores (the nodes measured on one machine)"
        runs = [m for m in data.placed + data.roundtrip
                if m.workload == "roundtrip" and m.ranks > platform.machine_cores]
        if not runs:
            return [], (f"needs a round-trip run (latency_checker, Ray) with more ranks than "
                        f"the machine's {platform.machine_cores} cores")
        m = turn_run(runs)
        trials = [r for r in runs if (r.size, r.ranks, r.ranks_per_node, r.statistic)
                  == (m.size, m.ranks, m.ranks_per_node, m.statistic)]
        target = statistics.median(r.value for r in trials)
        case = case_of(m, None if m in data.placed else data.ranks_per_node)
        case.run["exchanges"] = min(case.run["exchanges"], FIT_EXCHANGES)
        f = lambda x: case.simulate(platform.replace(turn_us=x))
        what = f"host.turn_us from {where(trials)}"
        try:
            x = _stored(solve(f, target, 0.0, max(target, 1.0), 1e-6, what))
        except InputError as e:
            return [], f"not reachable with host.turn_us: {e}"
        sim = f(x)
        return [Fitted("host.turn_us", x,
                       f"fit: Brent's method over the engine so that {case.label()} on one "
                       f"machine of {platform.machine_cores} cores gives the median of "
                       f"{len(trials)} trial(s)' {m.statistic}, {target:.6g} us "
                       f"({where(trials)}); simulated {sim:.6g} us "
                       f"({100 * (sim - target) / target:+.2f}%)")], None


class NicQueue(Fitter):
    """How much of its node's queued bytes a rendezvous's control message waits behind:
    measured, not fitted. A live run with --sample-nic-queue sampled each emulated host's
    tbf backlog; its 99th percentile (over every host and sample) is the level the node's
    connections keep queued. No 2-host file can fit it: there a control message follows
    its own connection's bytes, which are ahead of it anyway (docs/model.md, "Protocol")."""

    name = "NIC queue ahead of control messages"
    keys = ("network.nic_queue_bytes",)

    def fit(self, data, platform, state):
        ms = [m for m in data.unused if m.statistic == NIC_QUEUE_STATISTIC]
        if not ms:
            return [], ("needs a live run with --sample-nic-queue (an emulated cluster's tbf "
                        "backlog; no benchmark's output shows it)")
        m = max(ms, key=lambda x: x.value)
        prov = (f"measured: the 99th percentile of the NIC queue's backlog (the tbf's, "
                f"every emulated host's egress, sampled about every ms while the run went) "
                f"over {m.repetitions} samples ({m.where})"
                + (f", the largest of {len(ms)} such runs" if len(ms) > 1 else ""))
        return [Fitted("network.nic_queue_bytes", int(m.value), prov)], None


def _trials(points):
    # Trials are files of one tool (osu_latency, IMB and NetPIPE differ by their own
    # overheads, not by noise): the tool with the most files.
    files_of: dict[str, set] = {}
    for p in points:
        files_of.setdefault(p.m.tool, set()).add(p.m.source)
    tool = max(sorted(files_of), key=lambda t: len(files_of[t]), default=None)
    by_trial: dict[str, dict[int, float]] = {}
    for p in points:
        if p.m.tool == tool:
            by_trial.setdefault(p.m.source, {})[p.size] = p.value
    sizes = set.intersection(*(set(v) for v in by_trial.values())) if by_trial else set()
    best = {s_: min(t[s_] for t in by_trial.values()) for s_ in sizes}
    return by_trial, sizes, best


def trial_offsets(points) -> dict[str, float]:
    """Each ping-pong trial's (file's) offset over the fastest trial: the median over the
    sizes all trials share of its excess. What the Noise fitter models as the per-run
    delay, and what the joint fit must not fit into the latency (calibrate.py)."""
    by_trial, sizes, best = _trials(points)
    if not sizes:
        return {}
    return {src: float(np.median([t[s_] - best[s_] for s_ in sizes])) for src, t in by_trial.items()}


class Noise(Fitter):
    """A lognormal delay per run (noise.scope = "run": a new draw per trial, as a new pair
    of instances gives) from repeated ping-pong trials (3+ files): each trial's offset
    over the fastest trial (the median over sizes of its excess), a lognormal fitted to
    the nonzero offsets, and the latency moved to the fastest trial. Only differences
    between trials are observed: the noise is the excess over the fastest trial, which
    a latency fit cannot tell from the wire's own latency."""

    name = "noise"
    keys = ("noise.scope", "noise.distribution", "noise.median_us", "noise.sigma")

    def fit(self, data, platform, state):
        from scipy import stats

        by_trial, sizes, best = _trials(data.pingpong)
        if len(by_trial) < 3 or not sizes:
            return [], "needs three or more trials of one case (repeated files, same sizes)"
        offsets = np.array(list(trial_offsets(data.pingpong).values()))
        if np.count_nonzero(offsets > 0) < 2:
            return [], "the trials do not differ (no noise to fit)"
        pos = np.log(offsets[offsets > 0])
        scale, sigma = float(np.exp(np.mean(pos))), float(np.std(pos))
        if not (sigma > 0 and math.isfinite(scale)):
            return [], f"no lognormal fits the {len(offsets)} trials' offsets"
        prov = (f"fit: {len(offsets)} trials ({where(p.m for p in data.pingpong)}), offsets over "
                f"the fastest trial, lognormal by maximum likelihood (mean and "
                f"SD of the logarithms of the nonzero offsets)")
        out = [Fitted("noise.scope", "run", prov + "; one draw per trial"),
               Fitted("noise.distribution", "lognormal", prov),
               Fitted("noise.median_us", _stored(float(scale)), prov),
               Fitted("noise.sigma", _stored(float(sigma)), prov)]
        if "line" in state:
            # The line ran through all trials; the latency is the fastest trial's, and
            # the noise is the excess over it.
            L0, B = state["line"]
            key = "intranode.latency_us" if data.intranode else "network.latency_us"
            at = state.get("model_us") or (lambda s_: L0 + 8e-3 * s_ / B)
            move = float(np.median([best[s_] - at(s_) for s_ in sizes]))
            fastest = L0 + move
            # A line through all trials lies among them or above the fastest (other tools'
            # overheads): the fastest trial is below it, or above by no more than the
            # trials differ. A move up beyond their spread is the model's misfit (a bucket
            # the trials drain sooner than it does: +545 us once), not the trials' noise.
            spread = float(np.median([max(t[s_] for t in by_trial.values()) - best[s_]
                                      for s_ in sizes]))
            if fastest > 0 and move <= spread:
                out.append(Fitted(key, _stored(fastest),
                                  f"the fastest trial's latency (the line through all trials "
                                  f"moved to it); {prov}"))
            else:
                # The line misses the fastest trial by more than its own latency, or lies
                # below it by more than the trials differ: the line's shape, not a latency.
                why = ("at or below 0" if fastest <= 0 else
                       f"a move up of {move:.4g} us, beyond the trials' spread of {spread:.4g} us")
                out = [Fitted(f.key, f.value, f.provenance + f"; the latency stays the line's "
                              f"({L0:.4g} us): moved to the fastest trial it would be "
                              f"{fastest:.4g} us, {why}") for f in out]
        return out, None


class IntraNodeLine(Fitter):
    """The intra-node path's latency and bandwidth from a one-node ping-pong given beside
    the network's (the same line fit as PingPongLine, on those rows only)."""

    name = "intra-node latency and bandwidth"
    keys = ("intranode.latency_us", "intranode.bandwidth_gbps")

    def fit(self, data, platform, state):
        if not data.intra_pingpong:
            # Nothing to say: without such a ping-pong the line fitter above took the path
            # the files measured (the report of every other calibration stays as it was).
            return [], None
        own = Data(pingpong=data.intra_pingpong, ranks_per_node=2)
        return PingPongLine(True).fit(own, platform, {"segments": [], "breaks": []})


def fitters(intranode: bool) -> list[Fitter]:
    # Breakpoint fitters first: they decide whether the line fit may use segments.
    return [Pacing(), ProtocolThreshold(), TokenBucket(), PingPongLine(intranode), IntraNodeLine(),
            RoundTripSolve(), NicMessage(), MachineTurn(), NicQueue(), Noise()]


@dataclass
class FitReport:
    platform: Platform
    fitted: list[Fitted]
    skipped: list[tuple[str, str]]       # (fitter, why)
    segments: list[Segment]
    breaks: list
    data: Data


def calibrate(measurements: list[Measurement], base: Platform, ranks_per_node=None) -> FitReport:
    data = Data.of(measurements, ranks_per_node)
    state: dict = {"segments": [], "breaks": []}
    if len({p.size for p in data.pingpong}) >= 3:
        state["segments"] = segments([p.size for p in data.pingpong],
                                     [max(p.value, 1e-9) for p in data.pingpong])
        state["breaks"] = classify(state["segments"])
    fitted, skipped = [], []
    platform = base
    for f in fitters(data.intranode):
        why = f.enabled()
        if why is None:
            out, why = f.fit(data, platform, state)
            bad = [x.key for x in out if isinstance(x.value, float) and not math.isfinite(x.value)]
            if bad:
                out, why = [], f"the data gives no finite {', '.join(bad)}"
            fitted = [x for x in fitted if x.key not in {o.key for o in out}] + out
            platform = apply(platform, out)
        if why is not None:
            skipped.append((f.name, why))
    provenance = dict(platform.provenance)
    provenance.update({f.key: f.provenance for f in fitted})
    platform = platform.replace(provenance=provenance)
    return FitReport(platform, fitted, skipped, state["segments"], state["breaks"], data)


def apply(platform: Platform, fitted: list[Fitted]) -> Platform:
    field_of = {k: f for f, k in FILE_KEYS.items()}
    return platform.replace(**{field_of[x.key]: x.value for x in fitted}) if fitted else platform


def _stored(x: float) -> float:
    """Six significant digits, as the presets store fitted values."""
    return float(f"{x:.6g}")
